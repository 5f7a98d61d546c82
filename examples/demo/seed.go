package demo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The fixed parts of the seed data. Names, companies and products do not
// depend on the seed, so examples in documentation (a query for "acme", the
// product HW-1001) find something whatever the seed.

var staff = []struct {
	name, role, team, status string
	joinedDaysAgo            int
}{
	{"Maya Chen", "admin", "engineering", "active", 720},
	{"Daniel Okafor", "admin", "finance", "active", 650},
	{"Priya Raman", "agent", "support", "active", 540},
	{"Lucas Moreau", "agent", "support", "active", 420},
	{"Sofia Alvarez", "agent", "support", "active", 300},
	{"Tom Becker", "agent", "support", "active", 210},
	{"Aisha Karimi", "agent", "support", "deactivated", 480},
	{"Jonas Lindqvist", "analyst", "analytics", "active", 380},
	{"Grace Liu", "analyst", "analytics", "active", 150},
	{"Marco Rossi", "member", "sales", "active", 500},
	{"Hannah Schmidt", "member", "sales", "active", 260},
	{"Kenji Watanabe", "member", "sales", "invited", 3},
}

const staffDomain = "northwind.example"

var companies = []struct {
	name, domain string
	enterprise   bool
}{
	{"Acme Corp", "acme.example", true},
	{"Globex", "globex.example", true},
	{"Initech", "initech.example", false},
	{"Umbrella Health", "umbrella-health.example", true},
	{"Stark Logistics", "stark-logistics.example", true},
	{"Wayne Retail", "wayne-retail.example", false},
	{"Hooli", "hooli.example", true},
	{"Vandelay Imports", "vandelay.example", false},
	{"Pied Piper", "piedpiper.example", false},
	{"Soylent Foods", "soylent.example", false},
	{"Tyrell Robotics", "tyrell.example", true},
	{"Cyberdyne Labs", "cyberdyne.example", false},
}

var firstNames = []string{
	"Ava", "Ben", "Chloe", "David", "Elena", "Farid", "Gabriela", "Hiro", "Isabel",
	"Jack", "Kavya", "Liam", "Mia", "Noah", "Olivia", "Pedro", "Quinn", "Rosa",
	"Samuel", "Tara", "Umar", "Valentina", "William", "Xin", "Yara", "Zoe", "Arjun",
	"Bianca", "Carlos", "Dana", "Emeka", "Freya", "George", "Hana", "Ivan", "Julia",
}

var lastNames = []string{
	"Anderson", "Brooks", "Carter", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito",
	"Jensen", "Khan", "Lopez", "Martin", "Nguyen", "Owens", "Patel", "Quiroga", "Reyes",
	"Silva", "Turner", "Usman", "Vargas", "Walsh", "Xu", "Young", "Zimmer", "Abbott",
	"Bauer", "Costa", "Dubois", "Eze", "Foster", "Gupta", "Hall", "Ivanova", "Jones",
}

var jobTitles = []string{
	"CTO", "VP Engineering", "Head of Operations", "Procurement Manager", "IT Manager",
	"Office Manager", "CFO", "Founder", "Finance Director", "Product Manager",
}

var noteTexts = []string{
	"Discussed renewal; wants a quote for 20 more seats.",
	"Asked whether SSO is included in the business plan.",
	"Prefers email over phone calls.",
	"Evaluating a competitor; follow up next month.",
	"Sent the onboarding deck and a hardware price list.",
	"Budget approved for the office refresh in Q3.",
}

// productCatalog holds physical goods only: inventory tracks stock, and
// services are invoiced as free-text line items.
var productCatalog = []struct {
	sku, name, category string
	priceCents          int64
	reorderLevel        int
}{
	{"HW-1001", "Mechanical Keyboard K2", "hardware", 12900, 15},
	{"HW-1002", "27-inch 4K Monitor", "hardware", 34900, 10},
	{"HW-1003", "USB-C Dock Pro", "hardware", 19900, 12},
	{"HW-1004", "Noise-Cancelling Headset", "hardware", 14900, 15},
	{"HW-1005", "HD Webcam", "hardware", 7900, 20},
	{"HW-1006", "Ergonomic Mouse", "hardware", 5900, 25},
	{"HW-1007", "Portable SSD 1TB", "hardware", 10900, 15},
	{"AC-2001", "Laptop Sleeve 14-inch", "accessories", 2900, 30},
	{"AC-2002", "USB-C Cable 2m", "accessories", 1500, 50},
	{"AC-2003", "Monitor Arm", "accessories", 8900, 10},
	{"AC-2004", "Desk Mat XL", "accessories", 3400, 20},
	{"AC-2005", "Cable Organizer Kit", "accessories", 1900, 25},
	{"AC-2006", "HDMI Adapter", "accessories", 2200, 40},
	{"AC-2007", "Laptop Stand", "accessories", 4500, 20},
	{"NW-3001", "Wi-Fi 6 Router", "networking", 17900, 8},
	{"NW-3002", "8-Port Gigabit Switch", "networking", 6900, 10},
	{"NW-3003", "Mesh Wi-Fi Node", "networking", 12900, 10},
	{"NW-3004", "Cat6 Cable 10m", "networking", 1200, 60},
	{"NW-3005", "PoE Injector", "networking", 3900, 15},
	{"FN-4001", "Ergonomic Chair", "furniture", 39900, 5},
	{"FN-4002", "Standing Desk Frame", "furniture", 44900, 5},
	{"FN-4003", "LED Desk Lamp", "furniture", 4900, 15},
	{"FN-4004", "Monitor Stand", "furniture", 3900, 15},
	{"FN-4005", "Footrest", "furniture", 2900, 10},
}

var services = []struct {
	description string
	priceCents  int64
	maxQty      int
}{
	{"Premium Support (monthly)", 49900, 1},
	{"Onboarding Workshop", 150000, 1},
	{"Custom Integration (hour)", 18000, 10},
	{"Data Migration", 250000, 1},
}

var ticketTopics = []struct{ subject, description, resolution string }{
	{"Cannot log in after password reset", "The reset link works but the new password is rejected on the login page.",
		"Cleared the account's stale sessions; the new password works."},
	{"Invoice shows the wrong VAT number", "Our VAT number changed in March; the latest invoice still has the old one.",
		"Updated the VAT number and sent a corrected invoice."},
	{"Dock not detected on macOS", "The USB-C Dock Pro charges the laptop but external monitors stay black.",
		"Firmware update 2.4 fixed display output."},
	{"Request to add 10 seats", "We are onboarding a new team next week and need ten more seats.",
		"Added ten seats; prorated on the next invoice."},
	{"Refund for damaged monitor", "One 27-inch monitor arrived with a cracked panel. We would like a refund.",
		"Refunded the monitor and arranged the return pickup."},
	{"Export to CSV times out", "Exporting the yearly report fails after about a minute.",
		"Export now runs in the background and emails a link."},
	{"SSO configuration help", "Our identity provider rejects the SAML response with an audience error.",
		"Corrected the audience URI in the identity provider."},
	{"Shipping delay on order", "The chairs we ordered three weeks ago have not shipped yet.",
		"Order shipped from the backup warehouse."},
	{"Webhook deliveries failing", "All webhook deliveries return 401 since yesterday.",
		"Customer rotated the signing secret; deliveries resumed."},
	{"Question about annual billing", "Can we switch from monthly to annual billing mid-term?",
		"Explained the switch; it takes effect at the next renewal."},
	{"Headset microphone crackles", "Two headsets crackle when the cable moves.",
		"Replacement headsets shipped."},
	{"Router drops connection every hour", "The Wi-Fi 6 router loses its uplink roughly every hour.",
		"Disabled the ISP modem's DHCP lease conflict; connection stable."},
	{"How do I remove a user?", "An employee left; how do we remove their account and keep their data?",
		"Walked the customer through deactivating the user."},
	{"Charged twice this month", "Our card was charged twice for the same invoice.",
		"Refunded the duplicate charge."},
	{"Feature request: dark mode", "Several of our staff would like a dark theme.",
		"Logged the request with the product team."},
	{"API rate limit too low", "Our nightly sync hits the rate limit; can it be raised?",
		"Raised the limit to 600 requests per minute."},
}

var agentReplies = []string{
	"Thanks for reporting this, we are looking into it.",
	"Could you send a screenshot of the error?",
	"We have escalated this to the engineering team.",
	"A replacement has been shipped; the tracking number is in your email.",
	"This is fixed on our side, please try again.",
}

var customerReplies = []string{
	"Here is the screenshot you asked for.",
	"It happened again this morning.",
	"Thanks, that worked.",
	"Any update on this?",
}

var seedRefundReasons = []string{"requested_by_customer", "duplicate", "product_defect"}

// seed fills an empty store. Every timestamp lies before the start of the
// clock's current day, so nothing is in the future and the last 30 days
// always have activity.
func seed(s *store, seedValue int64) {
	r := rand.New(rand.NewPCG(uint64(seedValue), 0x9e3779b97f4a7c15))
	now := s.now()
	today := day(now)
	at := func(daysAgo int) time.Time {
		return today.AddDate(0, 0, -daysAgo).Add(time.Duration(8*60+r.IntN(10*60)) * time.Minute)
	}
	// before keeps a derived timestamp in the past.
	before := func(t time.Time) time.Time {
		if limit := today.Add(-time.Minute); t.After(limit) {
			return limit
		}
		return t
	}
	pick := func(weights ...int) int {
		total := 0
		for _, w := range weights {
			total += w
		}
		x := r.IntN(total)
		for i, w := range weights {
			if x < w {
				return i
			}
			x -= w
		}
		return len(weights) - 1
	}

	for _, st := range staff {
		u := &user{
			id:        s.newID("usr"),
			name:      st.name,
			email:     strings.ToLower(strings.ReplaceAll(st.name, " ", ".")) + "@" + staffDomain,
			role:      st.role,
			team:      st.team,
			status:    st.status,
			createdAt: at(st.joinedDaysAgo),
		}
		switch st.status {
		case "active":
			u.lastLoginAt = at(1 + r.IntN(6))
		case "deactivated":
			u.lastLoginAt = at(40 + r.IntN(20))
		}
		s.users = append(s.users, u)
	}
	owners := []string{"usr_010", "usr_011"}
	var agents []string
	for _, u := range s.users {
		if u.role == "agent" && u.status == "active" {
			agents = append(agents, u.id)
		}
	}

	for i, first := range firstNames {
		co := companies[i%len(companies)]
		last := lastNames[i]
		c := &contact{
			id:      s.newID("con"),
			name:    first + " " + last,
			email:   strings.ToLower(first+"."+last) + "@" + co.domain,
			phone:   fmt.Sprintf("+1-555-01%02d", i),
			company: co.name,
			title:   jobTitles[r.IntN(len(jobTitles))],
			ownerID: owners[i%len(owners)],
		}
		switch pick(60, 25, 15) {
		case 0:
			c.status = "customer"
			c.createdAt = at(60 + r.IntN(300))
		case 1:
			c.status = "lead"
			c.createdAt = at(1 + r.IntN(90))
		default:
			c.status = "churned"
			c.createdAt = at(200 + r.IntN(300))
		}
		c.updatedAt = c.createdAt
		c.tags = []string{"smb"}
		if co.enterprise {
			c.tags = []string{"enterprise"}
		}
		if r.IntN(100) < 15 {
			c.tags = append(c.tags, "vip")
		}
		if r.IntN(100) < 40 {
			c.tags = append(c.tags, "newsletter")
		}
		if r.IntN(100) < 20 {
			c.tags = append(c.tags, "beta")
		}
		for range r.IntN(3) {
			when := before(c.createdAt.AddDate(0, 0, 1+r.IntN(40)))
			c.notes = append(c.notes, note{
				id:        s.newID("note"),
				authorID:  c.ownerID,
				body:      noteTexts[r.IntN(len(noteTexts))],
				createdAt: when,
			})
			c.updatedAt = when
		}
		s.contacts = append(s.contacts, c)
	}

	for i, p := range productCatalog {
		stock := p.reorderLevel + 5 + r.IntN(150)
		if i%6 == 5 {
			stock = r.IntN(p.reorderLevel + 1) // a few products need reordering
		}
		s.products = append(s.products, &product{
			id:           s.newID("prd"),
			sku:          p.sku,
			name:         p.name,
			category:     p.category,
			priceCents:   p.priceCents,
			stock:        stock,
			reorderLevel: p.reorderLevel,
			updatedAt:    at(5 + r.IntN(60)),
		})
	}

	seedBilling(s, r, today, at, before)
	seedTickets(s, r, at, before, agents, pick)
	seedEvents(s, r, at, pick)
}

// seedBilling creates invoices for customers and churned customers, with
// payments for paid ones, part payments on some open ones and a few refunds.
// Ids are handed out in time order, as a real billing system would.
func seedBilling(s *store, r *rand.Rand, today time.Time, at func(int) time.Time, before func(time.Time) time.Time) {
	type draft struct {
		inv      *invoice
		payments []*payment
	}
	var drafts []draft
	for _, c := range s.contacts {
		if c.status == "lead" {
			continue
		}
		age := int(today.Sub(day(c.createdAt)).Hours() / 24)
		for range 1 + r.IntN(3) {
			daysAgo := 1 + r.IntN(max(age-1, 1))
			if c.status == "churned" {
				daysAgo = 90 + r.IntN(max(age-90, 1))
			}
			inv := &invoice{customerID: c.id, status: "open", issuedAt: at(daysAgo)}
			inv.dueAt = inv.issuedAt.AddDate(0, 0, 30)
			for range 1 + r.IntN(3) {
				var li lineItem
				if r.IntN(10) < 7 {
					p := s.products[r.IntN(len(s.products))]
					qty := 1 + r.IntN(5)
					if p.priceCents > 30000 {
						qty = 1 + r.IntN(2)
					}
					li = lineItem{productID: p.id, description: p.name, quantity: qty, unitPriceCents: p.priceCents}
				} else {
					sv := services[r.IntN(len(services))]
					li = lineItem{description: sv.description, quantity: 1 + r.IntN(sv.maxQty), unitPriceCents: sv.priceCents}
				}
				li.amountCents = int64(li.quantity) * li.unitPriceCents
				inv.items = append(inv.items, li)
				inv.totalCents += li.amountCents
			}
			var outcome int // 0 paid, 1 open, 2 void
			switch {
			case c.status == "churned":
				outcome = []int{0, 0, 0, 2}[r.IntN(4)]
			case daysAgo > 45:
				outcome = []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 2}[r.IntN(10)]
			default:
				outcome = r.IntN(2)
			}
			d := draft{inv: inv}
			payAt := before(inv.issuedAt.AddDate(0, 0, r.IntN(max(min(daysAgo-1, 28), 1))))
			method := []string{"card", "card", "bank_transfer", "paypal"}[r.IntN(4)]
			switch outcome {
			case 0:
				inv.status, inv.paidCents, inv.closedAt = "paid", inv.totalCents, payAt
				d.payments = append(d.payments, &payment{customerID: c.id, method: method, amountCents: inv.totalCents, createdAt: payAt})
			case 1:
				if r.IntN(100) < 20 {
					part := inv.totalCents / 2
					inv.paidCents = part
					d.payments = append(d.payments, &payment{customerID: c.id, method: method, amountCents: part, createdAt: payAt})
				}
			case 2:
				inv.status, inv.closedAt = "void", before(inv.issuedAt.AddDate(0, 0, 2))
			}
			drafts = append(drafts, d)
		}
	}
	slices.SortStableFunc(drafts, func(a, b draft) int { return a.inv.issuedAt.Compare(b.inv.issuedAt) })
	var pays []*payment
	for _, d := range drafts {
		d.inv.id = s.newID("inv")
		for _, p := range d.payments {
			p.invoiceID = d.inv.id
			pays = append(pays, p)
		}
		s.invoices = append(s.invoices, d.inv)
	}
	slices.SortStableFunc(pays, func(a, b *payment) int { return a.createdAt.Compare(b.createdAt) })
	var refs []*refund
	for _, p := range pays {
		p.id = s.newID("pay")
		s.payments = append(s.payments, p)
		if r.IntN(100) < 15 {
			amount := p.amountCents * int64(10+r.IntN(41)) / 100
			p.refundedCents = amount
			refs = append(refs, &refund{
				paymentID:   p.id,
				reason:      seedRefundReasons[r.IntN(len(seedRefundReasons))],
				amountCents: amount,
				createdAt:   before(p.createdAt.AddDate(0, 0, 1+r.IntN(10))),
			})
		}
	}
	slices.SortStableFunc(refs, func(a, b *refund) int { return a.createdAt.Compare(b.createdAt) })
	for _, rf := range refs {
		rf.id = s.newID("ref")
		s.refunds = append(s.refunds, rf)
	}
}

// seedTickets opens tickets for paying and former customers over the last two
// months, assigned to the active agents, some with a conversation.
func seedTickets(s *store, r *rand.Rand, at func(int) time.Time, before func(time.Time) time.Time, agents []string, pick func(...int) int) {
	var customers []*contact
	for _, c := range s.contacts {
		if c.status != "lead" {
			customers = append(customers, c)
		}
	}
	if len(customers) == 0 || len(agents) == 0 {
		return
	}
	var tickets []*ticket
	for range 40 {
		c := customers[r.IntN(len(customers))]
		topic := ticketTopics[r.IntN(len(ticketTopics))]
		t := &ticket{
			customerID:  c.id,
			subject:     topic.subject,
			description: topic.description,
			status:      []string{"open", "pending", "closed"}[pick(35, 20, 45)],
			priority:    []string{"low", "normal", "high", "urgent"}[pick(20, 50, 22, 8)],
			channel:     []string{"email", "chat", "phone", "web"}[r.IntN(4)],
			createdAt:   at(1 + r.IntN(60)),
		}
		if t.status != "open" || r.IntN(100) >= 30 {
			t.assigneeID = agents[r.IntN(len(agents))]
		}
		t.updatedAt = t.createdAt
		when := t.createdAt
		for k := range r.IntN(4) {
			when = before(when.Add(time.Duration(1+r.IntN(20)) * time.Hour))
			cm := comment{authorID: c.id, body: customerReplies[r.IntN(len(customerReplies))], createdAt: when}
			if k%2 == 0 && t.assigneeID != "" {
				cm.authorID, cm.body = t.assigneeID, agentReplies[r.IntN(len(agentReplies))]
			}
			t.comments = append(t.comments, cm)
			t.updatedAt = when
		}
		if t.status == "closed" {
			t.closedAt = before(when.Add(time.Duration(1+r.IntN(48)) * time.Hour))
			t.updatedAt = t.closedAt
			t.resolution = topic.resolution
		}
		tickets = append(tickets, t)
	}
	slices.SortStableFunc(tickets, func(a, b *ticket) int { return a.createdAt.Compare(b.createdAt) })
	for _, t := range tickets {
		t.id = s.newID("tkt")
		for i := range t.comments {
			t.comments[i].id = s.newID("cmt")
		}
		s.tickets = append(s.tickets, t)
	}
}

// seedEvents records product usage by current customers over the last 30
// days.
func seedEvents(s *store, r *rand.Rand, at func(int) time.Time, pick func(...int) int) {
	var active []*contact
	for _, c := range s.contacts {
		if c.status == "customer" {
			active = append(active, c)
		}
	}
	if len(active) == 0 {
		return
	}
	names := []string{"page_view", "login", "feature_used", "export_created", "invite_sent", "checkout_started", "purchase"}
	var events []*event
	for range 320 {
		c := active[r.IntN(len(active))]
		name := names[pick(35, 25, 20, 8, 5, 4, 3)]
		props := map[string]string{}
		switch name {
		case "page_view":
			props["page"] = []string{"/dashboard", "/reports", "/billing", "/settings", "/integrations"}[r.IntN(5)]
		case "login":
			props["method"] = []string{"password", "sso", "google"}[r.IntN(3)]
		case "feature_used":
			props["feature"] = []string{"reports", "automations", "api", "sso", "exports"}[r.IntN(5)]
		case "purchase", "checkout_started":
			props["plan"] = []string{"team", "business"}[r.IntN(2)]
		}
		events = append(events, &event{name: name, customerID: c.id, at: at(1 + r.IntN(30)), props: props})
	}
	slices.SortStableFunc(events, func(a, b *event) int { return a.at.Compare(b.at) })
	for _, e := range events {
		e.id = s.newID("evt")
		s.events = append(s.events, e)
	}
}
