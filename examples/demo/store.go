package demo

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// store is one server's world. A single mutex guards it: the tools are quick
// and a plan's concurrency comes from overlapping latency, not from
// contention on the store.
type store struct {
	mu      sync.Mutex
	clock   func() time.Time
	latency time.Duration
	ids     map[string]int

	users    []*user
	contacts []*contact
	products []*product
	invoices []*invoice
	payments []*payment
	refunds  []*refund
	tickets  []*ticket
	events   []*event
	messages []*message

	// toolCount is the number of demo tools, reported by health when it is
	// called without a server in its context.
	toolCount int
}

type user struct {
	id, name, email, role, team, status string
	createdAt, lastLoginAt              time.Time
}

type contact struct {
	id, name, email, phone, company, title, status, ownerID string
	tags                                                    []string
	createdAt, updatedAt                                    time.Time
	notes                                                   []note
}

type note struct {
	id, authorID, body string
	createdAt          time.Time
}

type product struct {
	id, sku, name, category string
	priceCents              int64
	stock, reorderLevel     int
	updatedAt               time.Time
}

// invoice.status is stored as open, paid or void; "overdue" is derived on
// read from the due date, so it is always right for the current clock.
type invoice struct {
	id, customerID, status, memo string
	items                        []lineItem
	totalCents, paidCents        int64
	issuedAt, dueAt, closedAt    time.Time
}

type lineItem struct {
	productID, description      string
	quantity                    int
	unitPriceCents, amountCents int64
}

type payment struct {
	id, invoiceID, customerID, method string
	amountCents, refundedCents        int64
	createdAt                         time.Time
}

type refund struct {
	id, paymentID, reason string
	amountCents           int64
	createdAt             time.Time
}

type ticket struct {
	id, customerID, subject, description, status, priority, channel, assigneeID, resolution string
	createdAt, updatedAt, closedAt                                                          time.Time
	comments                                                                                []comment
}

type comment struct {
	id, authorID, body string
	internal           bool
	createdAt          time.Time
}

type event struct {
	id, name, customerID string
	at                   time.Time
	props                map[string]string
}

type message struct {
	id, kind, to, subject, body, customerID string
	sentAt                                  time.Time
}

func newStore(c config) *store {
	s := &store{clock: c.clock, latency: c.latency, ids: map[string]int{}}
	if c.seedData {
		seed(s, c.seed)
	}
	return s
}

// now is the store's clock in UTC, to the second, so that timestamps read
// the same in every output.
func (s *store) now() time.Time { return s.clock().UTC().Truncate(time.Second) }

// newID returns the next id with the given prefix: con_001, con_002, ...
func (s *store) newID(prefix string) string {
	s.ids[prefix]++
	return fmt.Sprintf("%s_%03d", prefix, s.ids[prefix])
}

// wait sleeps for the configured latency, ending early when ctx is done.
func (s *store) wait(ctx context.Context) error {
	if s.latency <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *store) user(id string) *user {
	for _, u := range s.users {
		if u.id == id {
			return u
		}
	}
	return nil
}

func (s *store) contact(id string) *contact {
	for _, c := range s.contacts {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (s *store) product(id string) *product {
	for _, p := range s.products {
		if p.id == id || strings.EqualFold(p.sku, id) {
			return p
		}
	}
	return nil
}

func (s *store) invoice(id string) *invoice {
	for _, inv := range s.invoices {
		if inv.id == id {
			return inv
		}
	}
	return nil
}

func (s *store) payment(id string) *payment {
	for _, p := range s.payments {
		if p.id == id {
			return p
		}
	}
	return nil
}

func (s *store) ticket(id string) *ticket {
	for _, t := range s.tickets {
		if t.id == id {
			return t
		}
	}
	return nil
}

// Results.

// structured answers with v as structured content and its JSON as text, for
// clients that ignore structured content. Every demo tool answers this way,
// with a value of the type its output schema was generated from.
func structured(v any) *mcp.CallToolResult { return mcp.NewToolResultStructuredOnly(v) }

// notFound is the error for an unknown id; it names the tool that lists valid
// ids so that a model can recover on its own.
func notFound(kind, id, lister string) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf("%s %q not found; use %s to look up valid ids", kind, id, lister))
}

func failf(format string, a ...any) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf(format, a...))
}

// Paging.

const defaultLimit = 20

// page returns the bounds of one page of n results and the offset of the next
// page, nil on the last page.
func page(n, offset, limit int) (from, to int, next *int) {
	if limit <= 0 {
		limit = defaultLimit
	}
	from = min(max(offset, 0), n)
	to = min(from+limit, n)
	if to < n {
		next = &to
	}
	return from, to, next
}

// Formatting.

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// dateLayout and datePattern are the one date format of the demo's
// arguments and reports: a UTC calendar day, YYYY-MM-DD.
const (
	dateLayout  = "2006-01-02"
	datePattern = `^\d{4}-\d{2}-\d{2}$`
)

// parseDate reads a date argument. The input schema has checked its shape,
// so only a day that does not exist, such as 2026-02-30, fails here.
func parseDate(arg, value string) (time.Time, *mcp.CallToolResult) {
	t, err := time.Parse(dateLayout, value)
	if err != nil {
		return time.Time{}, failf("%s %q is not a calendar date; give a day that exists, as YYYY-MM-DD (UTC)", arg, value)
	}
	return t, nil
}

func day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func contains(haystack, needle string) bool {
	return strings.Contains(strings.ToLower(haystack), strings.ToLower(needle))
}
