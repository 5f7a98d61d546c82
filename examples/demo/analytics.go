package demo

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// Analytics: product usage events and business metrics computed from every
// other app's records, so numbers agree with what the other tools return.

var (
	metrics       = []string{"signups", "revenue_cents", "active_customers", "events", "tickets_opened", "tickets_closed", "invoices_issued"}
	granularities = []string{"day", "week", "month"}
	rankings      = []string{"revenue", "tickets", "events"}
)

// maxPoints bounds a metric series: a year of days, seven years of weeks or
// thirty of months.
const maxPoints = 366

type metricPoint struct {
	PeriodStart string `json:"period_start" jsonschema:"First day of the period (YYYY-MM-DD, UTC)"`
	Value       int64  `json:"value" jsonschema:"Value of the metric in the period"`
}

type metricSeries struct {
	Metric      string        `json:"metric" enum:"metrics" jsonschema:"The metric that was computed"`
	Granularity string        `json:"granularity" enum:"granularities" jsonschema:"Length of each period; weeks start on Monday"`
	From        string        `json:"from" jsonschema:"First day included (YYYY-MM-DD)"`
	To          string        `json:"to" jsonschema:"Last day included (YYYY-MM-DD)"`
	EventName   string        `json:"event_name,omitempty" jsonschema:"Event the events metric was restricted to"`
	Total       int64         `json:"total" jsonschema:"Value over the whole range: the sum of the points, except for active_customers, where it counts distinct customers in the range"`
	Points      []metricPoint `json:"points" jsonschema:"One point per period, in time order, zeros included"`
}

type rankedCustomer struct {
	CustomerID   string `json:"customer_id" jsonschema:"Customer's contact id (con_...)"`
	CustomerName string `json:"customer_name" jsonschema:"Customer's name; (deleted contact) when the contact no longer exists"`
	Company      string `json:"company,omitempty" jsonschema:"Customer's company"`
	Value        int64  `json:"value" jsonschema:"Net revenue in US cents, tickets opened or events tracked in the window"`
}

type topCustomers struct {
	By        string           `json:"by" enum:"rankings" jsonschema:"What customers are ranked by"`
	Days      int              `json:"days" jsonschema:"Length of the window in days, today included"`
	Since     string           `json:"since" jsonschema:"First day of the window (YYYY-MM-DD)"`
	Customers []rankedCustomer `json:"customers" jsonschema:"Customers with a non-zero value, highest first"`
}

type eventView struct {
	ID         string            `json:"id" jsonschema:"Event id, e.g. evt_001"`
	Name       string            `json:"name" jsonschema:"Event name in snake_case, e.g. login or feature_used"`
	CustomerID string            `json:"customer_id,omitempty" jsonschema:"Customer who caused the event (con_...); absent for anonymous events"`
	OccurredAt string            `json:"occurred_at" jsonschema:"When the event happened (RFC 3339)"`
	Properties map[string]string `json:"properties" jsonschema:"Event properties, string values"`
}

type eventList struct {
	Events     []eventView `json:"events" jsonschema:"Matching events, newest first"`
	Total      int         `json:"total" jsonschema:"Number of events matching the filters"`
	NextOffset *int        `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

func (e *event) view() eventView {
	return eventView{ID: e.id, Name: e.name, CustomerID: e.customerID, OccurredAt: stamp(e.at), Properties: maps.Clone(e.props)}
}

func (s *store) analyticsTools() []server.ServerTool {
	return []server.ServerTool{
		{Tool: withMeta(newTool("analytics.track_event", "Track event",
			"Record a product usage event, optionally for a customer, with string properties.",
			additive,
			mcp.WithString("name", mcp.Required(), mcp.Description("Event name in snake_case, e.g. feature_used."),
				mcp.Pattern(`^[a-z][a-z0-9_]{0,63}$`)),
			withCustomerID("Customer who caused the event", false),
			mcp.WithObject("properties", mcp.Description("Event properties; values are strings."),
				mcp.AdditionalProperties(map[string]any{"type": "string", "maxLength": 500}), mcp.MaxProperties(20)),
			withOutput[eventView]()), catalog.Meta{Examples: []catalog.Example{
			example("A customer used a feature", map[string]any{"name": "feature_used", "customer_id": "con_001",
				"properties": map[string]any{"feature": "exports"}}),
		}}),
			Handler: handle(s, s.trackEvent)},
		{Tool: withMeta(newTool("analytics.list_events", "List events",
			"List tracked events, newest first, by name, customer or day.",
			readOnly,
			join([]mcp.ToolOption{
				mcp.WithString("name", mcp.Description("Only events with this name, e.g. login or purchase.")),
				withCustomerID("Only events of this customer", false),
				withDate("since", "Only events on or after this day"),
				withOutput[eventList](),
			}, withPaging())...), catalog.Meta{Examples: []catalog.Example{
			example("A customer's latest logins", map[string]any{"name": "login", "customer_id": "con_001", "limit": 5}),
		}}),
			Handler: handle(s, s.listEvents)},
		{Tool: withMeta(newTool("analytics.query_metrics", "Query metrics",
			"Compute a business metric as a time series over a range of days, one point per day, week or month "+
				"(at most 366 points). Revenue is net of refunds, in US cents.",
			readOnly,
			mcp.WithString("metric", mcp.Required(), mcp.Description("Metric to compute."), mcp.Enum(metrics...)),
			withDate("from", "First day included; defaults to 29 days before to"),
			withDate("to", "Last day included; defaults to today"),
			mcp.WithString("granularity", mcp.Description("Length of each period; weeks start on Monday."),
				mcp.Enum(granularities...), mcp.DefaultString("day")),
			mcp.WithString("event_name", mcp.Description("For the events metric only: count only events with this name.")),
			withOutput[metricSeries]()), catalog.Meta{Examples: []catalog.Example{
			example("Weekly net revenue over the last 30 days", map[string]any{"metric": "revenue_cents", "granularity": "week"}),
			example("Daily logins over the last 30 days", map[string]any{"metric": "events", "event_name": "login"}),
		}}),
			Handler: handle(s, s.queryMetrics)},
		{Tool: withMeta(newTool("analytics.top_customers", "Top customers",
			"Rank customers by net revenue, tickets opened or events tracked over the last days.",
			readOnly,
			mcp.WithString("by", mcp.Description("What to rank by."), mcp.Enum(rankings...), mcp.DefaultString("revenue")),
			mcp.WithInteger("days", mcp.Description("Length of the window in days, today included."), mcp.Min(1), mcp.Max(365), mcp.DefaultNumber(90)),
			mcp.WithInteger("limit", mcp.Description("Number of customers to return."), mcp.Min(1), mcp.Max(50), mcp.DefaultNumber(5)),
			withOutput[topCustomers]()), catalog.Meta{Examples: []catalog.Example{
			example("The three biggest spenders of the last 30 days", map[string]any{"by": "revenue", "days": 30, "limit": 3}),
		}}),
			Handler: handle(s, s.topCustomers)},
	}
}

type trackArgs struct {
	Name       string            `json:"name"`
	CustomerID string            `json:"customer_id"`
	Properties map[string]string `json:"properties"`
}

func (s *store) trackEvent(a trackArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.CustomerID != "" && s.contact(a.CustomerID) == nil {
		return notFound("customer", a.CustomerID, "crm.find_contacts")
	}
	if a.Properties == nil {
		a.Properties = map[string]string{}
	}
	e := &event{id: s.newID("evt"), name: a.Name, customerID: a.CustomerID, at: s.now(), props: a.Properties}
	s.events = append(s.events, e)
	return structured(e.view())
}

type listEventsArgs struct {
	Name       string `json:"name"`
	CustomerID string `json:"customer_id"`
	Since      string `json:"since"`
	Limit      int    `json:"limit"`
	Offset     int    `json:"offset"`
}

func (s *store) listEvents(a listEventsArgs) *mcp.CallToolResult {
	var since time.Time
	if a.Since != "" {
		t, bad := parseDate("since", a.Since)
		if bad != nil {
			return bad
		}
		since = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []*event
	for i := len(s.events) - 1; i >= 0; i-- {
		e := s.events[i]
		if (a.Name != "" && e.name != a.Name) || (a.CustomerID != "" && e.customerID != a.CustomerID) || e.at.Before(since) {
			continue
		}
		matches = append(matches, e)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	out := eventList{Events: []eventView{}, Total: len(matches), NextOffset: next}
	for _, e := range matches[from:to] {
		out.Events = append(out.Events, e.view())
	}
	return structured(out)
}

type metricsArgs struct {
	Metric      string `json:"metric"`
	From        string `json:"from"`
	To          string `json:"to"`
	Granularity string `json:"granularity"`
	EventName   string `json:"event_name"`
}

// periodStart returns the start of the period of the given granularity that
// contains t.
func periodStart(t time.Time, granularity string) time.Time {
	d := day(t)
	switch granularity {
	case "week":
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case "month":
		return time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return d
}

func nextPeriod(t time.Time, granularity string) time.Time {
	switch granularity {
	case "week":
		return t.AddDate(0, 0, 7)
	case "month":
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

func (s *store) queryMetrics(a metricsArgs) *mcp.CallToolResult {
	if a.Granularity == "" {
		a.Granularity = "day"
	}
	if a.EventName != "" && a.Metric != "events" {
		return failf("event_name only applies to the events metric, not %s; leave event_name out, or use metric events", a.Metric)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	to := day(s.now())
	if a.To != "" {
		t, bad := parseDate("to", a.To)
		if bad != nil {
			return bad
		}
		to = t
	}
	from := to.AddDate(0, 0, -29)
	if a.From != "" {
		t, bad := parseDate("from", a.From)
		if bad != nil {
			return bad
		}
		from = t
	}
	if to.Before(from) {
		return failf("from %s is after to %s; swap them", from.Format(dateLayout), to.Format(dateLayout))
	}
	if n := periods(from, to, a.Granularity); n > maxPoints {
		return tooManyPoints(from, to, a.Granularity, n)
	}
	end := to.AddDate(0, 0, 1)

	values := map[time.Time]int64{}
	distinct := map[time.Time]map[string]bool{}
	all := map[string]bool{}
	add := func(at time.Time, v int64) {
		if at.Before(from) || !at.Before(end) {
			return
		}
		values[periodStart(at, a.Granularity)] += v
	}
	switch a.Metric {
	case "signups":
		for _, c := range s.contacts {
			add(c.createdAt, 1)
		}
	case "revenue_cents":
		for _, p := range s.payments {
			add(p.createdAt, p.amountCents)
		}
		for _, r := range s.refunds {
			add(r.createdAt, -r.amountCents)
		}
	case "active_customers":
		for _, e := range s.events {
			if e.customerID == "" || e.at.Before(from) || !e.at.Before(end) {
				continue
			}
			p := periodStart(e.at, a.Granularity)
			if distinct[p] == nil {
				distinct[p] = map[string]bool{}
			}
			distinct[p][e.customerID] = true
			all[e.customerID] = true
		}
		for p, set := range distinct {
			values[p] = int64(len(set))
		}
	case "events":
		for _, e := range s.events {
			if a.EventName == "" || e.name == a.EventName {
				add(e.at, 1)
			}
		}
	case "tickets_opened":
		for _, t := range s.tickets {
			add(t.createdAt, 1)
		}
	case "tickets_closed":
		for _, t := range s.tickets {
			if !t.closedAt.IsZero() {
				add(t.closedAt, 1)
			}
		}
	case "invoices_issued":
		for _, inv := range s.invoices {
			add(inv.issuedAt, 1)
		}
	default:
		return failf("unknown metric %q; choose one of %v", a.Metric, metrics)
	}

	out := metricSeries{Metric: a.Metric, Granularity: a.Granularity, From: from.Format(dateLayout),
		To: to.Format(dateLayout), EventName: a.EventName, Points: []metricPoint{}}
	for p := periodStart(from, a.Granularity); p.Before(end); p = nextPeriod(p, a.Granularity) {
		out.Points = append(out.Points, metricPoint{PeriodStart: p.Format(dateLayout), Value: values[p]})
		out.Total += values[p]
	}
	if a.Metric == "active_customers" {
		out.Total = int64(len(all))
	}
	return structured(out)
}

// periods counts the periods of the given granularity that a range of days
// touches: the points of its series.
func periods(from, to time.Time, granularity string) int {
	first, last := periodStart(from, granularity), periodStart(to, granularity)
	switch granularity {
	case "week":
		return int(last.Sub(first).Hours()/24)/7 + 1
	case "month":
		return (last.Year()-first.Year())*12 + int(last.Month()-first.Month()) + 1
	}
	return int(last.Sub(first).Hours()/24) + 1
}

// tooManyPoints explains a range with more than maxPoints periods and names
// what fits: each coarser granularity that covers the same range in one
// call, and how far from may go at the granularity asked for.
func tooManyPoints(from, to time.Time, granularity string, n int) *mcp.CallToolResult {
	unit := map[string]string{"day": "days", "week": "weeks", "month": "months"}
	var fits []string
	for _, g := range granularities[slices.Index(granularities, granularity)+1:] {
		if m := periods(from, to, g); m <= maxPoints {
			fits = append(fits, fmt.Sprintf("granularity %s (%d points)", g, m))
		}
	}
	earliest := periodStart(to, granularity)
	for range maxPoints - 1 {
		earliest = previousPeriod(earliest, granularity)
	}
	fits = append(fits, fmt.Sprintf("from %s or later", earliest.Format(dateLayout)))
	return failf("from %s to %s is %d %s, and a series has at most %d points; use %s, or split the range into several calls",
		from.Format(dateLayout), to.Format(dateLayout), n, unit[granularity], maxPoints, strings.Join(fits, ", or "))
}

func previousPeriod(t time.Time, granularity string) time.Time {
	switch granularity {
	case "week":
		return t.AddDate(0, 0, -7)
	case "month":
		return t.AddDate(0, -1, 0)
	}
	return t.AddDate(0, 0, -1)
}

type topArgs struct {
	By    string `json:"by"`
	Days  int    `json:"days"`
	Limit int    `json:"limit"`
}

func (s *store) topCustomers(a topArgs) *mcp.CallToolResult {
	if a.By == "" {
		a.By = "revenue"
	}
	if a.Days <= 0 {
		a.Days = 90
	}
	if a.Limit <= 0 {
		a.Limit = 5
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	since := day(s.now()).AddDate(0, 0, -(a.Days - 1))
	in := func(t time.Time) bool { return !t.Before(since) }
	totals := map[string]int64{}
	switch a.By {
	case "revenue":
		owner := map[string]string{}
		for _, p := range s.payments {
			owner[p.id] = p.customerID
			if in(p.createdAt) {
				totals[p.customerID] += p.amountCents
			}
		}
		for _, r := range s.refunds {
			if in(r.createdAt) {
				totals[owner[r.paymentID]] -= r.amountCents
			}
		}
	case "tickets":
		for _, t := range s.tickets {
			if in(t.createdAt) {
				totals[t.customerID]++
			}
		}
	case "events":
		for _, e := range s.events {
			if e.customerID != "" && in(e.at) {
				totals[e.customerID]++
			}
		}
	default:
		return failf("unknown ranking %q; choose one of %v", a.By, rankings)
	}
	var ranked []rankedCustomer
	for id, v := range totals {
		if v <= 0 {
			continue
		}
		rc := rankedCustomer{CustomerID: id, CustomerName: "(deleted contact)", Value: v}
		if c := s.contact(id); c != nil {
			rc.CustomerName, rc.Company = c.name, c.company
		}
		ranked = append(ranked, rc)
	}
	slices.SortFunc(ranked, func(x, y rankedCustomer) int {
		return cmp.Or(cmp.Compare(y.Value, x.Value), cmp.Compare(x.CustomerID, y.CustomerID))
	})
	out := topCustomers{By: a.By, Days: a.Days, Since: since.Format(dateLayout), Customers: []rankedCustomer{}}
	out.Customers = append(out.Customers, ranked[:min(a.Limit, len(ranked))]...)
	return structured(out)
}
