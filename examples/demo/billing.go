package demo

import (
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// Billing: invoices, payments and refunds. All amounts are integer US cents,
// so that sums are exact. An invoice is open until it is due and overdue
// after; both are unpaid and take payments.

const currency = "USD"

var (
	invoiceStatuses = []string{"open", "overdue", "paid", "void"}
	paymentMethods  = []string{"card", "bank_transfer", "paypal"}
	paymentStatuses = []string{"succeeded", "partially_refunded", "refunded"}
	refundReasons   = []string{"requested_by_customer", "duplicate", "fraudulent", "product_defect"}
)

type lineItemView struct {
	ProductID      string `json:"product_id,omitempty" jsonschema:"Inventory product id, when the line sells a product"`
	Description    string `json:"description" jsonschema:"What was sold"`
	Quantity       int    `json:"quantity" jsonschema:"Number of units"`
	UnitPriceCents int64  `json:"unit_price_cents" jsonschema:"Price of one unit in US cents"`
	AmountCents    int64  `json:"amount_cents" jsonschema:"quantity × unit_price_cents"`
}

type paymentView struct {
	ID            string `json:"id" jsonschema:"Payment id, e.g. pay_001"`
	InvoiceID     string `json:"invoice_id" jsonschema:"Invoice the payment settles"`
	CustomerID    string `json:"customer_id" jsonschema:"Customer's contact id (con_...)"`
	Method        string `json:"method" enum:"paymentMethods" jsonschema:"How the customer paid"`
	AmountCents   int64  `json:"amount_cents" jsonschema:"Amount collected in US cents"`
	RefundedCents int64  `json:"refunded_cents" jsonschema:"Amount refunded so far in US cents"`
	Status        string `json:"status" enum:"paymentStatuses" jsonschema:"Whether any of the payment was refunded"`
	CreatedAt     string `json:"created_at" jsonschema:"When the payment was collected (RFC 3339)"`
}

type invoiceView struct {
	ID             string `json:"id" jsonschema:"Invoice id, e.g. inv_001"`
	CustomerID     string `json:"customer_id" jsonschema:"Customer's contact id (con_...)"`
	Status         string `json:"status" enum:"invoiceStatuses" jsonschema:"open (unpaid, not yet due), overdue (unpaid and past due_at), paid or void"`
	Currency       string `json:"currency" enum:"currencies" jsonschema:"ISO 4217 currency code of every amount"`
	TotalCents     int64  `json:"total_cents" jsonschema:"Invoice total in US cents"`
	PaidCents      int64  `json:"paid_cents" jsonschema:"Amount paid so far in US cents"`
	AmountDueCents int64  `json:"amount_due_cents" jsonschema:"Amount still to collect in US cents; 0 when paid or void"`
	IssuedAt       string `json:"issued_at" jsonschema:"When the invoice was issued (RFC 3339)"`
	DueAt          string `json:"due_at" jsonschema:"Payment deadline (RFC 3339)"`
	ClosedAt       string `json:"closed_at,omitempty" jsonschema:"When the invoice was paid in full or voided (RFC 3339)"`
	Memo           string `json:"memo,omitempty" jsonschema:"Note printed on the invoice"`
}

// invoiceDetail is an invoice with its lines and payments, as
// billing.get_invoice and billing.create_invoice return it.
type invoiceDetail struct {
	invoiceView
	Items    []lineItemView `json:"items" jsonschema:"Line items, in the order they were billed"`
	Payments []paymentView  `json:"payments" jsonschema:"Payments against the invoice, oldest first; empty when there are none"`
}

type invoiceList struct {
	Invoices   []invoiceView `json:"invoices" jsonschema:"Matching invoices, newest first"`
	Total      int           `json:"total" jsonschema:"Number of invoices matching the filters"`
	NextOffset *int          `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

type paymentList struct {
	Payments   []paymentView `json:"payments" jsonschema:"Matching payments, newest first"`
	Total      int           `json:"total" jsonschema:"Number of payments matching the filters"`
	NextOffset *int          `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

type paymentReceipt struct {
	Payment paymentView `json:"payment" jsonschema:"The payment just recorded"`
	Invoice invoiceView `json:"invoice" jsonschema:"The invoice after the payment; paid once nothing is due"`
}

type refundView struct {
	ID                   string `json:"id" jsonschema:"Refund id, e.g. ref_001"`
	PaymentID            string `json:"payment_id" jsonschema:"Payment that was refunded"`
	InvoiceID            string `json:"invoice_id" jsonschema:"Invoice the payment belongs to"`
	CustomerID           string `json:"customer_id" jsonschema:"Customer's contact id (con_...)"`
	AmountCents          int64  `json:"amount_cents" jsonschema:"Amount of this refund in US cents"`
	Reason               string `json:"reason" enum:"refundReasons" jsonschema:"Why the money was returned"`
	CreatedAt            string `json:"created_at" jsonschema:"When the refund was issued (RFC 3339)"`
	PaymentRefundedCents int64  `json:"payment_refunded_cents" jsonschema:"Total refunded on the payment, including this refund"`
	PaymentStatus        string `json:"payment_status" enum:"refundedStatuses" jsonschema:"Payment status after the refund"`
}

type balanceView struct {
	CustomerID       string `json:"customer_id" jsonschema:"Customer's contact id (con_...)"`
	CustomerName     string `json:"customer_name" jsonschema:"Customer's name"`
	Currency         string `json:"currency" enum:"currencies" jsonschema:"ISO 4217 currency code of every amount"`
	InvoicedCents    int64  `json:"invoiced_cents" jsonschema:"Total of all invoices that are not void, in US cents"`
	PaidCents        int64  `json:"paid_cents" jsonschema:"Total collected in payments, in US cents"`
	RefundedCents    int64  `json:"refunded_cents" jsonschema:"Total returned in refunds, in US cents"`
	NetPaidCents     int64  `json:"net_paid_cents" jsonschema:"paid_cents minus refunded_cents"`
	OutstandingCents int64  `json:"outstanding_cents" jsonschema:"Amount due on unpaid (open and overdue) invoices, in US cents"`
	OverdueCents     int64  `json:"overdue_cents" jsonschema:"Part of outstanding_cents due on overdue invoices"`
	OpenInvoices     int    `json:"open_invoices" jsonschema:"Number of open invoices (unpaid, not yet due); overdue ones are not counted here"`
	OverdueInvoices  int    `json:"overdue_invoices" jsonschema:"Number of overdue invoices (unpaid and past due)"`
}

func (p *payment) status() string {
	switch {
	case p.refundedCents == 0:
		return "succeeded"
	case p.refundedCents < p.amountCents:
		return "partially_refunded"
	default:
		return "refunded"
	}
}

func (p *payment) view() paymentView {
	return paymentView{ID: p.id, InvoiceID: p.invoiceID, CustomerID: p.customerID, Method: p.method,
		AmountCents: p.amountCents, RefundedCents: p.refundedCents, Status: p.status(), CreatedAt: stamp(p.createdAt)}
}

// status derives overdue from the due date, so it is right at any clock.
func (inv *invoice) statusAt(now time.Time) string {
	if inv.status == "open" && now.After(inv.dueAt) {
		return "overdue"
	}
	return inv.status
}

func (inv *invoice) due() int64 {
	if inv.status != "open" {
		return 0
	}
	return inv.totalCents - inv.paidCents
}

func (s *store) invoiceView(inv *invoice) invoiceView {
	return invoiceView{
		ID: inv.id, CustomerID: inv.customerID, Status: inv.statusAt(s.now()), Currency: currency,
		TotalCents: inv.totalCents, PaidCents: inv.paidCents, AmountDueCents: inv.due(),
		IssuedAt: stamp(inv.issuedAt), DueAt: stamp(inv.dueAt), ClosedAt: stamp(inv.closedAt), Memo: inv.memo,
	}
}

func (s *store) invoiceDetail(inv *invoice) invoiceDetail {
	d := invoiceDetail{invoiceView: s.invoiceView(inv), Items: []lineItemView{}, Payments: []paymentView{}}
	for _, li := range inv.items {
		d.Items = append(d.Items, lineItemView{ProductID: li.productID, Description: li.description,
			Quantity: li.quantity, UnitPriceCents: li.unitPriceCents, AmountCents: li.amountCents})
	}
	for _, p := range s.payments {
		if p.invoiceID == inv.id {
			d.Payments = append(d.Payments, p.view())
		}
	}
	return d
}

// billingTool tags a billing tool "payments", so that search can offer the
// money-moving tools together and policy can single them out.
func billingTool(t mcp.Tool, m catalog.Meta) mcp.Tool {
	m.Tags = append([]string{"payments"}, m.Tags...)
	return catalog.SetMeta(t, m)
}

func (s *store) billingTools() []server.ServerTool {
	invoiceID := mcp.WithString("invoice_id", mcp.Required(), mcp.Description("Id of the invoice, e.g. inv_001; billing.list_invoices returns ids."))
	lineItem := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"quantity"},
		"properties": map[string]any{
			"product_id": map[string]any{"type": "string",
				"description": "Inventory product id or SKU (prd_001 or HW-1001); description and price default to the product's."},
			"description": map[string]any{"type": "string", "minLength": 1, "maxLength": 200,
				"description": "What is sold; required without product_id."},
			"quantity": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000,
				"description": "Number of units."},
			"unit_price_cents": map[string]any{"type": "integer", "minimum": 0, "maximum": 100000000,
				"description": "Price of one unit in US cents; required without product_id."},
		},
	}

	return []server.ServerTool{
		{Tool: billingTool(newTool("billing.list_invoices", "List invoices",
			"List invoices, newest first, optionally for one customer, in one status or issued since a day.",
			readOnly,
			join([]mcp.ToolOption{
				withCustomerID("Only invoices of this customer", false),
				mcp.WithString("status", mcp.Description("Only invoices in this status: open (unpaid, not yet due), overdue "+
					"(unpaid and past due), paid or void. For every unpaid invoice, list open and overdue ones."),
					mcp.Enum(invoiceStatuses...)),
				withDate("issued_since", "Only invoices issued on or after this day"),
				withOutput[invoiceList](),
			}, withPaging())...), catalog.Meta{Examples: []catalog.Example{
			example("Overdue invoices", map[string]any{"status": "overdue"}),
			example("Every invoice of one customer", map[string]any{"customer_id": "con_009", "limit": 100}),
		}}),
			Handler: handle(s, s.listInvoices)},
		{Tool: billingTool(newTool("billing.get_invoice", "Get invoice",
			"Fetch one invoice with its line items and payments.",
			readOnly, invoiceID, withOutput[invoiceDetail]()), catalog.Meta{Examples: []catalog.Example{
			example("One invoice in full", map[string]any{"invoice_id": "inv_001"}),
		}}),
			Handler: handle(s, s.getInvoice)},
		{Tool: billingTool(newTool("billing.create_invoice", "Create invoice",
			"Issue an invoice to a customer. Each line sells either an inventory product (price taken from the catalog "+
				"unless given) or a free-text item with a price.",
			additive,
			withCustomerID("Customer to bill", true),
			mcp.WithArray("items", mcp.Required(), mcp.Description("Line items, at least one."),
				mcp.Items(lineItem), mcp.MinItems(1), mcp.MaxItems(50)),
			mcp.WithInteger("due_in_days", mcp.Description("Days from today until payment is due."), mcp.Min(0), mcp.Max(120), mcp.DefaultNumber(30)),
			mcp.WithString("memo", mcp.Description("Note printed on the invoice."), mcp.MaxLength(500)),
			withOutput[invoiceDetail]()), catalog.Meta{Examples: []catalog.Example{
			example("Two keyboards and a setup fee, due in 14 days", map[string]any{"customer_id": "con_001", "due_in_days": 14,
				"items": []any{
					map[string]any{"product_id": "HW-1001", "quantity": 2},
					map[string]any{"description": "Setup fee", "quantity": 1, "unit_price_cents": 5000},
				}}),
		}}),
			Handler: handle(s, s.createInvoice)},
		{Tool: billingTool(newTool("billing.record_payment", "Record payment",
			"Record money received against an unpaid (open or overdue) invoice; the invoice becomes paid once nothing is due.",
			additive, invoiceID,
			mcp.WithInteger("amount_cents", mcp.Description("Amount received in US cents; defaults to the whole amount due."),
				mcp.Min(1), mcp.Max(100000000)),
			mcp.WithString("method", mcp.Description("How the customer paid."), mcp.Enum(paymentMethods...), mcp.DefaultString("card")),
			withOutput[paymentReceipt]()), catalog.Meta{Examples: []catalog.Example{
			example("The whole amount due, by card", map[string]any{"invoice_id": "inv_047"}),
			example("$500.00 of an overdue invoice by bank transfer", map[string]any{"invoice_id": "inv_009", "amount_cents": 50000, "method": "bank_transfer"}),
		}}),
			Handler: handle(s, s.recordPayment)},
		{Tool: billingTool(newTool("billing.list_payments", "List payments",
			"List payments, newest first, optionally for one customer or one invoice, with how much was refunded.",
			readOnly,
			join([]mcp.ToolOption{
				withCustomerID("Only payments of this customer", false),
				mcp.WithString("invoice_id", mcp.Description("Only payments against this invoice (inv_...).")),
				withOutput[paymentList](),
			}, withPaging())...), catalog.Meta{Examples: []catalog.Example{
			example("Payments of one customer", map[string]any{"customer_id": "con_028"}),
		}}),
			Handler: handle(s, s.listPayments)},
		{Tool: billingTool(newTool("billing.refund_payment", "Refund payment",
			"Return money from a payment to the customer, in full or in part. Refunds cannot be undone; "+
				"the customer's net paid balance drops by the refunded amount.",
			// Destructive: the money is gone and cannot be taken back. Not
			// idempotent: each call refunds again. Closed-world: the refund is
			// booked in this billing system, which settles with the card
			// processor on its own schedule.
			hints{destructive: true},
			mcp.WithString("payment_id", mcp.Required(), mcp.Description("Id of the payment, e.g. pay_001; billing.list_payments returns ids.")),
			mcp.WithInteger("amount_cents", mcp.Description("Amount to refund in US cents; defaults to everything not yet refunded."),
				mcp.Min(1), mcp.Max(100000000)),
			mcp.WithString("reason", mcp.Description("Why the money is returned."),
				mcp.Enum(refundReasons...), mcp.DefaultString("requested_by_customer")),
			withOutput[refundView]()), approval(catalog.Meta{
			Tags: []string{"refunds"},
			Examples: []catalog.Example{
				example("Refund $15.00 of a payment", map[string]any{"payment_id": "pay_003", "amount_cents": 1500}),
				example("Refund a duplicate charge in full", map[string]any{"payment_id": "pay_007", "reason": "duplicate"}),
			},
		})), Handler: handle(s, s.refundPayment)},
		{Tool: billingTool(newTool("billing.void_invoice", "Void invoice",
			"Cancel an unpaid (open or overdue) invoice that has no payments, so it is no longer owed. Voiding cannot be undone; "+
				"voiding a void invoice returns it unchanged.",
			overwrite, invoiceID,
			mcp.WithString("reason", mcp.Description("Why the invoice is voided, added to its memo."), mcp.MaxLength(500)),
			withOutput[invoiceView]()), approval(catalog.Meta{Examples: []catalog.Example{
			example("Cancel an invoice sent by mistake", map[string]any{"invoice_id": "inv_047", "reason": "Sent by mistake"}),
		}})),
			Handler: handle(s, s.voidInvoice)},
		{Tool: billingTool(newTool("billing.get_balance", "Get customer balance",
			"Summarize a customer's account: invoiced, paid, refunded, outstanding and overdue amounts.",
			readOnly, withCustomerID("Customer whose account to summarize", true), withOutput[balanceView]()),
			catalog.Meta{Examples: []catalog.Example{
				example("A customer with overdue invoices", map[string]any{"customer_id": "con_009"}),
			}}),
			Handler: handle(s, s.getBalance)},
	}
}

type listInvoicesArgs struct {
	CustomerID  string `json:"customer_id"`
	Status      string `json:"status"`
	IssuedSince string `json:"issued_since"`
	Limit       int    `json:"limit"`
	Offset      int    `json:"offset"`
}

func (s *store) listInvoices(a listInvoicesArgs) *mcp.CallToolResult {
	var since time.Time
	if a.IssuedSince != "" {
		t, bad := parseDate("issued_since", a.IssuedSince)
		if bad != nil {
			return bad
		}
		since = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var matches []*invoice
	for i := len(s.invoices) - 1; i >= 0; i-- {
		inv := s.invoices[i]
		if (a.CustomerID != "" && inv.customerID != a.CustomerID) ||
			(a.Status != "" && inv.statusAt(now) != a.Status) ||
			inv.issuedAt.Before(since) {
			continue
		}
		matches = append(matches, inv)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	out := invoiceList{Invoices: []invoiceView{}, Total: len(matches), NextOffset: next}
	for _, inv := range matches[from:to] {
		out.Invoices = append(out.Invoices, s.invoiceView(inv))
	}
	return structured(out)
}

type invoiceIDArgs struct {
	InvoiceID string `json:"invoice_id"`
}

func (s *store) getInvoice(a invoiceIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoice(a.InvoiceID)
	if inv == nil {
		return notFound("invoice", a.InvoiceID, "billing.list_invoices")
	}
	return structured(s.invoiceDetail(inv))
}

type createInvoiceArgs struct {
	CustomerID string `json:"customer_id"`
	Items      []struct {
		ProductID      string `json:"product_id"`
		Description    string `json:"description"`
		Quantity       int    `json:"quantity"`
		UnitPriceCents *int64 `json:"unit_price_cents"`
	} `json:"items"`
	DueInDays *int   `json:"due_in_days"`
	Memo      string `json:"memo"`
}

func (s *store) createInvoice(a createInvoiceArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.contact(a.CustomerID) == nil {
		return notFound("customer", a.CustomerID, "crm.find_contacts")
	}
	now := s.now()
	dueDays := 30
	if a.DueInDays != nil {
		dueDays = *a.DueInDays
	}
	inv := &invoice{customerID: a.CustomerID, status: "open", memo: a.Memo, issuedAt: now, dueAt: now.AddDate(0, 0, dueDays)}
	for i, it := range a.Items {
		li := lineItem{description: strings.TrimSpace(it.Description), quantity: it.Quantity}
		if it.ProductID != "" {
			p := s.product(it.ProductID)
			if p == nil {
				return failf("items[%d]: product %q not found; use inventory.list_products to look up valid ids", i, it.ProductID)
			}
			li.productID, li.unitPriceCents = p.id, p.priceCents
			if li.description == "" {
				li.description = p.name
			}
		} else if li.description == "" || it.UnitPriceCents == nil {
			return failf("items[%d]: a line without product_id needs description and unit_price_cents", i)
		}
		if it.UnitPriceCents != nil {
			li.unitPriceCents = *it.UnitPriceCents
		}
		li.amountCents = int64(li.quantity) * li.unitPriceCents
		inv.items = append(inv.items, li)
		inv.totalCents += li.amountCents
	}
	inv.id = s.newID("inv")
	s.invoices = append(s.invoices, inv)
	return structured(s.invoiceDetail(inv))
}

type recordPaymentArgs struct {
	InvoiceID   string `json:"invoice_id"`
	AmountCents int64  `json:"amount_cents"`
	Method      string `json:"method"`
}

func (s *store) recordPayment(a recordPaymentArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoice(a.InvoiceID)
	if inv == nil {
		return notFound("invoice", a.InvoiceID, "billing.list_invoices")
	}
	if inv.status != "open" {
		return failf("invoice %s is %s; only unpaid (open or overdue) invoices take payments", inv.id, inv.status)
	}
	due := inv.due()
	amount := a.AmountCents
	if amount == 0 {
		amount = due
	}
	if amount > due {
		return failf("amount_cents %d exceeds the %d cents due on invoice %s; record at most %d, "+
			"or leave amount_cents out to record the whole amount due", amount, due, inv.id, due)
	}
	if a.Method == "" {
		a.Method = "card"
	}
	now := s.now()
	p := &payment{id: s.newID("pay"), invoiceID: inv.id, customerID: inv.customerID, method: a.Method,
		amountCents: amount, createdAt: now}
	s.payments = append(s.payments, p)
	inv.paidCents += amount
	if inv.due() == 0 {
		inv.status, inv.closedAt = "paid", now
	}
	return structured(paymentReceipt{Payment: p.view(), Invoice: s.invoiceView(inv)})
}

type listPaymentsArgs struct {
	CustomerID string `json:"customer_id"`
	InvoiceID  string `json:"invoice_id"`
	Limit      int    `json:"limit"`
	Offset     int    `json:"offset"`
}

func (s *store) listPayments(a listPaymentsArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []paymentView
	for i := len(s.payments) - 1; i >= 0; i-- {
		p := s.payments[i]
		if (a.CustomerID != "" && p.customerID != a.CustomerID) || (a.InvoiceID != "" && p.invoiceID != a.InvoiceID) {
			continue
		}
		matches = append(matches, p.view())
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	return structured(paymentList{Payments: append([]paymentView{}, matches[from:to]...), Total: len(matches), NextOffset: next})
}

type refundArgs struct {
	PaymentID   string `json:"payment_id"`
	AmountCents int64  `json:"amount_cents"`
	Reason      string `json:"reason"`
}

func (s *store) refundPayment(a refundArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.payment(a.PaymentID)
	if p == nil {
		return notFound("payment", a.PaymentID, "billing.list_payments")
	}
	left := p.amountCents - p.refundedCents
	if left == 0 {
		return failf("payment %s is already fully refunded; nothing is left to refund", p.id)
	}
	amount := a.AmountCents
	if amount == 0 {
		amount = left
	}
	if amount > left {
		return failf("amount_cents %d exceeds the %d cents still refundable on payment %s; refund at most %d, "+
			"or leave amount_cents out to refund the rest", amount, left, p.id, left)
	}
	if a.Reason == "" {
		a.Reason = "requested_by_customer"
	}
	rf := &refund{id: s.newID("ref"), paymentID: p.id, reason: a.Reason, amountCents: amount, createdAt: s.now()}
	s.refunds = append(s.refunds, rf)
	p.refundedCents += amount
	return structured(refundView{
		ID: rf.id, PaymentID: p.id, InvoiceID: p.invoiceID, CustomerID: p.customerID, AmountCents: amount,
		Reason: rf.reason, CreatedAt: stamp(rf.createdAt), PaymentRefundedCents: p.refundedCents, PaymentStatus: p.status(),
	})
}

type voidArgs struct {
	InvoiceID string `json:"invoice_id"`
	Reason    string `json:"reason"`
}

func (s *store) voidInvoice(a voidArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoice(a.InvoiceID)
	if inv == nil {
		return notFound("invoice", a.InvoiceID, "billing.list_invoices")
	}
	switch {
	case inv.status == "void":
		// Already void: report it unchanged, as the call promises idempotence.
	case inv.status == "paid":
		return failf("invoice %s is paid and has payments, so it cannot be voided; to give the money back, "+
			"refund its payments with billing.refund_payment (billing.list_payments with invoice_id %s lists them)", inv.id, inv.id)
	case inv.paidCents > 0:
		return failf("invoice %s has payments, so it cannot be voided; collect the rest with billing.record_payment, "+
			"or refund its payments with billing.refund_payment to give the money back", inv.id)
	default:
		inv.status, inv.closedAt = "void", s.now()
		if a.Reason != "" {
			inv.memo = strings.TrimSpace(strings.Join([]string{inv.memo, "Voided: " + a.Reason}, " "))
		}
	}
	return structured(s.invoiceView(inv))
}

type customerIDArgs struct {
	CustomerID string `json:"customer_id"`
}

func (s *store) getBalance(a customerIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.contact(a.CustomerID)
	if c == nil {
		return notFound("customer", a.CustomerID, "crm.find_contacts")
	}
	now := s.now()
	b := balanceView{CustomerID: c.id, CustomerName: c.name, Currency: currency}
	for _, inv := range s.invoices {
		if inv.customerID != c.id || inv.status == "void" {
			continue
		}
		b.InvoicedCents += inv.totalCents
		b.OutstandingCents += inv.due()
		switch inv.statusAt(now) {
		case "open":
			b.OpenInvoices++
		case "overdue":
			b.OverdueInvoices++
			b.OverdueCents += inv.due()
		}
	}
	for _, p := range s.payments {
		if p.customerID == c.id {
			b.PaidCents += p.amountCents
			b.RefundedCents += p.refundedCents
		}
	}
	b.NetPaidCents = b.PaidCents - b.RefundedCents
	return structured(b)
}
