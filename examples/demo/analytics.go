package demo

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Analytics: product usage events and business metrics computed from every
// other app's records, so numbers agree with what the other tools return.

var (
	metrics       = []string{"signups", "revenue_cents", "active_customers", "events", "tickets_opened", "tickets_closed", "invoices_issued"}
	granularities = []string{"day", "week", "month"}
	rankings      = []string{"revenue", "tickets", "events"}
)

const maxRangeDays = 366

type metricPoint struct {
	PeriodStart string `json:"period_start" jsonschema:"First day of the period (YYYY-MM-DD, UTC)"`
	Value       int64  `json:"value" jsonschema:"Value of the metric in the period"`
}

type metricSeries struct {
	Metric      string        `json:"metric" jsonschema:"The metric that was computed"`
	Granularity string        `json:"granularity" jsonschema:"Length of each period: day, week (starting Monday) or month"`
	From        string        `json:"from" jsonschema:"First day included (YYYY-MM-DD)"`
	To          string        `json:"to" jsonschema:"Last day included (YYYY-MM-DD)"`
	EventName   string        `json:"event_name,omitempty" jsonschema:"Event the events metric was restricted to"`
	Total       int64         `json:"total" jsonschema:"Value over the whole range; for active_customers, distinct customers in the range"`
	Points      []metricPoint `json:"points" jsonschema:"One point per period, in time order, zeros included"`
}

type rankedCustomer struct {
	CustomerID string `json:"customer_id" jsonschema:"Customer's contact id"`
	Name       string `json:"name" jsonschema:"Customer's name"`
	Company    string `json:"company,omitempty" jsonschema:"Customer's company"`
	Value      int64  `json:"value" jsonschema:"Net revenue in US cents, tickets opened or events tracked in the window"`
}

type topCustomers struct {
	By        string           `json:"by" jsonschema:"What customers are ranked by: revenue, tickets or events"`
	Days      int              `json:"days" jsonschema:"Length of the window in days, ending today"`
	Since     string           `json:"since" jsonschema:"First day of the window (YYYY-MM-DD)"`
	Customers []rankedCustomer `json:"customers" jsonschema:"Customers with a non-zero value, highest first"`
}

type eventView struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	CustomerID string            `json:"customer_id,omitempty"`
	At         string            `json:"at"`
	Properties map[string]string `json:"properties"`
}

func (e *event) view() eventView {
	return eventView{ID: e.id, Name: e.name, CustomerID: e.customerID, At: stamp(e.at), Properties: maps.Clone(e.props)}
}

func (s *store) analyticsTools() []server.ServerTool {
	return []server.ServerTool{
		{Tool: newTool("analytics.track_event", "Track event",
			"Record a product usage event, optionally for a customer, with string properties.",
			additive,
			mcp.WithString("name", mcp.Required(), mcp.Description("Event name in snake_case, e.g. feature_used."),
				mcp.Pattern(`^[a-z][a-z0-9_]{0,63}$`)),
			mcp.WithString("customer_id", mcp.Description("Customer who caused the event (contact id).")),
			mcp.WithObject("properties", mcp.Description("Event properties; values are strings."),
				mcp.AdditionalProperties(map[string]any{"type": "string", "maxLength": 500}), mcp.MaxProperties(20))),
			Handler: handle(s, s.trackEvent)},
		{Tool: newTool("analytics.list_events", "List events",
			"List tracked events, newest first, by name, customer or date.",
			readOnly,
			join([]mcp.ToolOption{
				mcp.WithString("name", mcp.Description("Only events with this name, e.g. login or purchase.")),
				mcp.WithString("customer_id", mcp.Description("Only events of this customer (contact id).")),
				mcp.WithString("since", mcp.Description("Only events on or after this UTC date (YYYY-MM-DD)."), mcp.Pattern(datePattern)),
			}, withPaging())...),
			Handler: handle(s, s.listEvents)},
		{Tool: newTool("analytics.query_metrics", "Query metrics",
			"Compute a business metric as a time series over a date range, one point per day, week or month. "+
				"Revenue is net of refunds, in US cents.",
			readOnly,
			mcp.WithString("metric", mcp.Required(), mcp.Description("Metric to compute."), mcp.Enum(metrics...)),
			mcp.WithString("from", mcp.Description("First UTC day included (YYYY-MM-DD); defaults to 29 days before to."), mcp.Pattern(datePattern)),
			mcp.WithString("to", mcp.Description("Last UTC day included (YYYY-MM-DD); defaults to today."), mcp.Pattern(datePattern)),
			mcp.WithString("granularity", mcp.Description("Length of each period."), mcp.Enum(granularities...), mcp.DefaultString("day")),
			mcp.WithString("event_name", mcp.Description("For the events metric, count only events with this name.")),
			withOutput[metricSeries]()),
			Handler: handle(s, s.queryMetrics)},
		{Tool: newTool("analytics.top_customers", "Top customers",
			"Rank customers by net revenue, tickets opened or events tracked over the last days.",
			readOnly,
			mcp.WithString("by", mcp.Description("What to rank by."), mcp.Enum(rankings...), mcp.DefaultString("revenue")),
			mcp.WithInteger("days", mcp.Description("Length of the window in days, ending today."), mcp.Min(1), mcp.Max(365), mcp.DefaultNumber(90)),
			mcp.WithInteger("limit", mcp.Description("Number of customers to return."), mcp.Min(1), mcp.Max(50), mcp.DefaultNumber(5)),
			withOutput[topCustomers]()),
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
	return jsonText(e.view())
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
		t, err := time.Parse(dateLayout, a.Since)
		if err != nil {
			return failf("since %q is not a valid date (YYYY-MM-DD)", a.Since)
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
	events := []eventView{}
	for _, e := range matches[from:to] {
		events = append(events, e.view())
	}
	out := map[string]any{"events": events, "total": len(matches)}
	if next != nil {
		out["next_offset"] = *next
	}
	return jsonText(out)
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
		return failf("event_name only applies to the events metric, not %s", a.Metric)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	to := day(s.now())
	if a.To != "" {
		t, err := time.Parse(dateLayout, a.To)
		if err != nil {
			return failf("to %q is not a valid date (YYYY-MM-DD)", a.To)
		}
		to = t
	}
	from := to.AddDate(0, 0, -29)
	if a.From != "" {
		t, err := time.Parse(dateLayout, a.From)
		if err != nil {
			return failf("from %q is not a valid date (YYYY-MM-DD)", a.From)
		}
		from = t
	}
	if to.Before(from) {
		return failf("from %s is after to %s", from.Format(dateLayout), to.Format(dateLayout))
	}
	if days := int(to.Sub(from).Hours()/24) + 1; days > maxRangeDays {
		return failf("the range covers %d days; at most %d are allowed, use a coarser granularity over a shorter range", days, maxRangeDays)
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
		rc := rankedCustomer{CustomerID: id, Name: "(deleted contact)", Value: v}
		if c := s.contact(id); c != nil {
			rc.Name, rc.Company = c.name, c.company
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
