package demo

import (
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// Billing: invoices, payments and refunds. All amounts are integer US cents,
// so that sums are exact.

const currency = "USD"

var (
	invoiceStatuses = []string{"open", "overdue", "paid", "void"}
	paymentMethods  = []string{"card", "bank_transfer", "paypal"}
	datePattern     = `^\d{4}-\d{2}-\d{2}$`
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
	CustomerID    string `json:"customer_id" jsonschema:"Customer's contact id"`
	Method        string `json:"method" jsonschema:"card, bank_transfer or paypal"`
	AmountCents   int64  `json:"amount_cents" jsonschema:"Amount collected in US cents"`
	RefundedCents int64  `json:"refunded_cents" jsonschema:"Amount refunded so far in US cents"`
	Status        string `json:"status" jsonschema:"succeeded, partially_refunded or refunded"`
	CreatedAt     string `json:"created_at" jsonschema:"When the payment was collected (RFC 3339)"`
}

type invoiceView struct {
	ID             string         `json:"id" jsonschema:"Invoice id, e.g. inv_001"`
	CustomerID     string         `json:"customer_id" jsonschema:"Customer's contact id"`
	Status         string         `json:"status" jsonschema:"open, overdue (open and past due), paid or void"`
	Currency       string         `json:"currency" jsonschema:"ISO 4217 currency code"`
	TotalCents     int64          `json:"total_cents" jsonschema:"Invoice total in US cents"`
	PaidCents      int64          `json:"paid_cents" jsonschema:"Amount paid so far in US cents"`
	AmountDueCents int64          `json:"amount_due_cents" jsonschema:"Amount still to collect in US cents; 0 unless open or overdue"`
	IssuedAt       string         `json:"issued_at" jsonschema:"When the invoice was issued (RFC 3339)"`
	DueAt          string         `json:"due_at" jsonschema:"Payment deadline (RFC 3339)"`
	ClosedAt       string         `json:"closed_at,omitempty" jsonschema:"When the invoice was paid in full or voided (RFC 3339)"`
	Memo           string         `json:"memo,omitempty" jsonschema:"Note printed on the invoice"`
	Items          []lineItemView `json:"items,omitempty" jsonschema:"Line items; returned by billing.get_invoice and billing.create_invoice"`
	Payments       []paymentView  `json:"payments,omitempty" jsonschema:"Payments against the invoice; returned by billing.get_invoice"`
}

type invoiceList struct {
	Invoices   []invoiceView `json:"invoices" jsonschema:"Matching invoices, newest first"`
	Total      int           `json:"total" jsonschema:"Number of invoices matching the filters"`
	NextOffset *int          `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

type refundView struct {
	ID                   string `json:"id" jsonschema:"Refund id, e.g. ref_001"`
	PaymentID            string `json:"payment_id" jsonschema:"Payment that was refunded"`
	InvoiceID            string `json:"invoice_id" jsonschema:"Invoice the payment belongs to"`
	CustomerID           string `json:"customer_id" jsonschema:"Customer's contact id"`
	AmountCents          int64  `json:"amount_cents" jsonschema:"Amount of this refund in US cents"`
	Reason               string `json:"reason" jsonschema:"Why the money was returned"`
	CreatedAt            string `json:"created_at" jsonschema:"When the refund was issued (RFC 3339)"`
	PaymentRefundedCents int64  `json:"payment_refunded_cents" jsonschema:"Total refunded on the payment, including this refund"`
	PaymentStatus        string `json:"payment_status" jsonschema:"Payment status after the refund: partially_refunded or refunded"`
}

type balanceView struct {
	CustomerID       string `json:"customer_id" jsonschema:"Customer's contact id"`
	CustomerName     string `json:"customer_name" jsonschema:"Customer's name"`
	Currency         string `json:"currency" jsonschema:"ISO 4217 currency code"`
	InvoicedCents    int64  `json:"invoiced_cents" jsonschema:"Total of all invoices that are not void"`
	PaidCents        int64  `json:"paid_cents" jsonschema:"Total collected in payments"`
	RefundedCents    int64  `json:"refunded_cents" jsonschema:"Total returned in refunds"`
	NetPaidCents     int64  `json:"net_paid_cents" jsonschema:"paid_cents minus refunded_cents"`
	OutstandingCents int64  `json:"outstanding_cents" jsonschema:"Amount due on open and overdue invoices"`
	OverdueCents     int64  `json:"overdue_cents" jsonschema:"Part of outstanding_cents that is past due"`
	OpenInvoices     int    `json:"open_invoices" jsonschema:"Number of open invoices, overdue ones included"`
	OverdueInvoices  int    `json:"overdue_invoices" jsonschema:"Number of overdue invoices"`
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

func (s *store) invoiceView(inv *invoice, detail bool) invoiceView {
	v := invoiceView{
		ID: inv.id, CustomerID: inv.customerID, Status: inv.statusAt(s.now()), Currency: currency,
		TotalCents: inv.totalCents, PaidCents: inv.paidCents, AmountDueCents: inv.due(),
		IssuedAt: stamp(inv.issuedAt), DueAt: stamp(inv.dueAt), ClosedAt: stamp(inv.closedAt), Memo: inv.memo,
	}
	if detail {
		for _, li := range inv.items {
			v.Items = append(v.Items, lineItemView{ProductID: li.productID, Description: li.description,
				Quantity: li.quantity, UnitPriceCents: li.unitPriceCents, AmountCents: li.amountCents})
		}
		for _, p := range s.payments {
			if p.invoiceID == inv.id {
				v.Payments = append(v.Payments, p.view())
			}
		}
	}
	return v
}

// billingTool tags a billing tool "payments", so that search can offer the
// money-moving tools together and policy can single them out.
func billingTool(t mcp.Tool, m catalog.Meta) mcp.Tool {
	m.Tags = append([]string{"payments"}, m.Tags...)
	return catalog.SetMeta(t, m)
}

func (s *store) billingTools() []server.ServerTool {
	customerID := func(required bool, what string) mcp.ToolOption {
		o := []mcp.PropertyOption{mcp.Description(what)}
		if required {
			o = append(o, mcp.Required())
		}
		return mcp.WithString("customer_id", o...)
	}
	invoiceID := mcp.WithString("invoice_id", mcp.Required(), mcp.Description("Id of the invoice, e.g. inv_001."))
	lineItem := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"quantity"},
		"properties": map[string]any{
			"product_id": map[string]any{"type": "string",
				"description": "Inventory product id or SKU; description and price default to the product's."},
			"description": map[string]any{"type": "string", "minLength": 1, "maxLength": 200,
				"description": "What is sold; required without product_id."},
			"quantity": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000,
				"description": "Number of units."},
			"unit_price_cents": map[string]any{"type": "integer", "minimum": 0, "maximum": 100000000,
				"description": "Price of one unit in US cents; required without product_id."},
		},
	}

	refund := newTool("billing.refund_payment", "Refund payment",
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
			mcp.Enum("requested_by_customer", "duplicate", "fraudulent", "product_defect"), mcp.DefaultString("requested_by_customer")),
		withOutput[refundView]())

	return []server.ServerTool{
		{Tool: billingTool(newTool("billing.list_invoices", "List invoices",
			"List invoices, newest first, optionally for one customer, in one status or issued after a date.",
			readOnly,
			join([]mcp.ToolOption{
				customerID(false, "Only invoices of this customer (contact id, e.g. con_001)."),
				mcp.WithString("status", mcp.Description("Only invoices in this status; an unpaid invoice past its due date is overdue, not open."),
					mcp.Enum(invoiceStatuses...)),
				mcp.WithString("issued_after", mcp.Description("Only invoices issued on or after this UTC date (YYYY-MM-DD)."),
					mcp.Pattern(datePattern)),
				withOutput[invoiceList](),
			}, withPaging())...), catalog.Meta{}),
			Handler: handle(s, s.listInvoices)},
		{Tool: billingTool(newTool("billing.get_invoice", "Get invoice",
			"Fetch one invoice with its line items and payments.",
			readOnly, invoiceID, withOutput[invoiceView]()), catalog.Meta{}),
			Handler: handle(s, s.getInvoice)},
		{Tool: billingTool(newTool("billing.create_invoice", "Create invoice",
			"Issue an invoice to a customer. Each line sells either an inventory product (price taken from the catalog "+
				"unless given) or a free-text item with a price.",
			additive,
			customerID(true, "Customer to bill (contact id, e.g. con_001)."),
			mcp.WithArray("items", mcp.Required(), mcp.Description("Line items, at least one."),
				mcp.Items(lineItem), mcp.MinItems(1), mcp.MaxItems(50)),
			mcp.WithInteger("due_in_days", mcp.Description("Days until payment is due."), mcp.Min(0), mcp.Max(120), mcp.DefaultNumber(30)),
			mcp.WithString("memo", mcp.Description("Note printed on the invoice."), mcp.MaxLength(500)),
			withOutput[invoiceView]()), catalog.Meta{}),
			Handler: handle(s, s.createInvoice)},
		{Tool: billingTool(newTool("billing.record_payment", "Record payment",
			"Record money received against an open invoice; the invoice becomes paid once nothing is due.",
			additive, invoiceID,
			mcp.WithInteger("amount_cents", mcp.Description("Amount received in US cents; defaults to the amount due."),
				mcp.Min(1), mcp.Max(100000000)),
			mcp.WithString("method", mcp.Description("How the customer paid."), mcp.Enum(paymentMethods...), mcp.DefaultString("card"))),
			catalog.Meta{}),
			Handler: handle(s, s.recordPayment)},
		{Tool: billingTool(newTool("billing.list_payments", "List payments",
			"List payments, newest first, optionally for one customer or one invoice, with how much was refunded.",
			readOnly,
			join([]mcp.ToolOption{
				customerID(false, "Only payments of this customer (contact id)."),
				mcp.WithString("invoice_id", mcp.Description("Only payments against this invoice.")),
			}, withPaging())...), catalog.Meta{}),
			Handler: handle(s, s.listPayments)},
		{Tool: billingTool(refund, catalog.Meta{
			RequiresApproval: catalog.Bool(true),
			Tags:             []string{"refunds"},
			Examples: []catalog.Example{
				{Description: "Refund $15.00 of a payment", Input: map[string]any{"payment_id": "pay_003", "amount_cents": 1500}},
				{Description: "Refund a duplicate charge in full", Input: map[string]any{"payment_id": "pay_007", "reason": "duplicate"}},
			},
		}), Handler: handle(s, s.refundPayment)},
		{Tool: billingTool(newTool("billing.void_invoice", "Void invoice",
			"Cancel an open invoice that has no payments so it is no longer owed. Voiding cannot be undone.",
			overwrite, invoiceID,
			mcp.WithString("reason", mcp.Description("Why the invoice is voided, kept in its memo."), mcp.MaxLength(500))),
			catalog.Meta{}),
			Handler: handle(s, s.voidInvoice)},
		{Tool: billingTool(newTool("billing.get_balance", "Get customer balance",
			"Summarize a customer's account: invoiced, paid, refunded, outstanding and overdue amounts.",
			readOnly, customerID(true, "Customer (contact id, e.g. con_001)."), withOutput[balanceView]()),
			catalog.Meta{}),
			Handler: handle(s, s.getBalance)},
	}
}

type listInvoicesArgs struct {
	CustomerID  string `json:"customer_id"`
	Status      string `json:"status"`
	IssuedAfter string `json:"issued_after"`
	Limit       int    `json:"limit"`
	Offset      int    `json:"offset"`
}

func (s *store) listInvoices(a listInvoicesArgs) *mcp.CallToolResult {
	var after time.Time
	if a.IssuedAfter != "" {
		t, err := time.Parse(dateLayout, a.IssuedAfter)
		if err != nil {
			return failf("issued_after %q is not a valid date (YYYY-MM-DD)", a.IssuedAfter)
		}
		after = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var matches []*invoice
	for i := len(s.invoices) - 1; i >= 0; i-- {
		inv := s.invoices[i]
		if (a.CustomerID != "" && inv.customerID != a.CustomerID) ||
			(a.Status != "" && inv.statusAt(now) != a.Status) ||
			inv.issuedAt.Before(after) {
			continue
		}
		matches = append(matches, inv)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	out := invoiceList{Invoices: []invoiceView{}, Total: len(matches), NextOffset: next}
	for _, inv := range matches[from:to] {
		out.Invoices = append(out.Invoices, s.invoiceView(inv, false))
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
	return structured(s.invoiceView(inv, true))
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
	return structured(s.invoiceView(inv, true))
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
		return failf("invoice %s is %s; only open invoices take payments", inv.id, inv.status)
	}
	due := inv.due()
	amount := a.AmountCents
	if amount == 0 {
		amount = due
	}
	if amount > due {
		return failf("amount_cents %d exceeds the %d cents due on invoice %s", amount, due, inv.id)
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
	return jsonText(map[string]any{"payment": p.view(), "invoice": s.invoiceView(inv, false)})
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
	out := map[string]any{"payments": append([]paymentView{}, matches[from:to]...), "total": len(matches)}
	if next != nil {
		out["next_offset"] = *next
	}
	return jsonText(out)
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
		return failf("payment %s is already fully refunded", p.id)
	}
	amount := a.AmountCents
	if amount == 0 {
		amount = left
	}
	if amount > left {
		return failf("amount_cents %d exceeds the %d cents still refundable on payment %s", amount, left, p.id)
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
	case inv.status == "paid" || inv.paidCents > 0:
		return failf("invoice %s has payments; refund them with billing.refund_payment instead of voiding", inv.id)
	default:
		inv.status, inv.closedAt = "void", s.now()
		if a.Reason != "" {
			inv.memo = strings.TrimSpace(strings.Join([]string{inv.memo, "Voided: " + a.Reason}, " "))
		}
	}
	return jsonText(s.invoiceView(inv, false))
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
		if inv.status == "open" {
			b.OpenInvoices++
			b.OutstandingCents += inv.due()
			if inv.statusAt(now) == "overdue" {
				b.OverdueInvoices++
				b.OverdueCents += inv.due()
			}
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
