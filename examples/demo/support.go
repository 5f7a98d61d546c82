package demo

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// Support: the help desk. Tickets move open → pending (waiting on the
// customer) → closed; a customer's reply moves a pending ticket back to open.

var (
	ticketStatuses   = []string{"open", "pending", "closed"}
	ticketPriorities = []string{"low", "normal", "high", "urgent"}
	ticketChannels   = []string{"email", "chat", "phone", "web"}
)

type commentView struct {
	ID        string `json:"id" jsonschema:"Comment id"`
	AuthorID  string `json:"author_id" jsonschema:"Workspace user (usr_...) or customer (con_...) who wrote it"`
	Body      string `json:"body" jsonschema:"Text of the comment"`
	Internal  bool   `json:"internal" jsonschema:"True for notes only staff can see"`
	CreatedAt string `json:"created_at" jsonschema:"When the comment was written (RFC 3339)"`
}

type ticketView struct {
	ID           string `json:"id" jsonschema:"Ticket id, e.g. tkt_001"`
	CustomerID   string `json:"customer_id" jsonschema:"Customer's contact id (con_...)"`
	Subject      string `json:"subject" jsonschema:"One-line summary"`
	Description  string `json:"description" jsonschema:"The customer's original request"`
	Status       string `json:"status" enum:"ticketStatuses" jsonschema:"open (waiting on staff), pending (waiting on the customer) or closed"`
	Priority     string `json:"priority" enum:"ticketPriorities" jsonschema:"How urgent the request is"`
	Channel      string `json:"channel" enum:"ticketChannels" jsonschema:"Where the request came in"`
	AssigneeID   string `json:"assignee_id,omitempty" jsonschema:"User (usr_...) working the ticket; absent when unassigned"`
	Resolution   string `json:"resolution,omitempty" jsonschema:"How the ticket was resolved; set when closed"`
	CommentCount int    `json:"comment_count" jsonschema:"Number of comments; support.get_ticket returns them"`
	CreatedAt    string `json:"created_at" jsonschema:"When the ticket was opened (RFC 3339)"`
	UpdatedAt    string `json:"updated_at" jsonschema:"Last change (RFC 3339)"`
	ClosedAt     string `json:"closed_at,omitempty" jsonschema:"When the ticket was closed (RFC 3339)"`
}

// ticketDetail is a ticket with its conversation, as support.get_ticket and
// support.close_ticket return it.
type ticketDetail struct {
	ticketView
	Comments []commentView `json:"comments" jsonschema:"Conversation, oldest first; empty when there is none"`
}

type ticketAssignment struct {
	Ticket             ticketView `json:"ticket" jsonschema:"The ticket after the assignment"`
	PreviousAssigneeID string     `json:"previous_assignee_id,omitempty" jsonschema:"Who worked the ticket before (usr_...); absent when it was unassigned"`
}

type addedComment struct {
	TicketID string      `json:"ticket_id" jsonschema:"Ticket the comment was added to"`
	Status   string      `json:"status" enum:"notClosed" jsonschema:"Ticket status after the comment"`
	Comment  commentView `json:"comment" jsonschema:"The new comment"`
}

type ticketList struct {
	Tickets    []ticketView `json:"tickets" jsonschema:"Matching tickets, newest first"`
	Total      int          `json:"total" jsonschema:"Number of tickets matching the filters"`
	NextOffset *int         `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

func (t *ticket) view() ticketView {
	return ticketView{
		ID: t.id, CustomerID: t.customerID, Subject: t.subject, Description: t.description, Status: t.status,
		Priority: t.priority, Channel: t.channel, AssigneeID: t.assigneeID, Resolution: t.resolution,
		CommentCount: len(t.comments), CreatedAt: stamp(t.createdAt), UpdatedAt: stamp(t.updatedAt), ClosedAt: stamp(t.closedAt),
	}
}

func (t *ticket) detail() ticketDetail {
	d := ticketDetail{ticketView: t.view(), Comments: []commentView{}}
	for _, c := range t.comments {
		d.Comments = append(d.Comments, c.view())
	}
	return d
}

func (c comment) view() commentView {
	return commentView{ID: c.id, AuthorID: c.authorID, Body: c.body, Internal: c.internal, CreatedAt: stamp(c.createdAt)}
}

func (s *store) supportTools() []server.ServerTool {
	ticketID := mcp.WithString("ticket_id", mcp.Required(), mcp.Description("Id of the ticket, e.g. tkt_001; support.list_tickets returns ids."))
	return []server.ServerTool{
		{Tool: withMeta(newTool("support.open_ticket", "Open ticket",
			"Open a support ticket on behalf of a customer. New tickets are open and unassigned.",
			additive,
			withCustomerID("Customer asking for help", true),
			mcp.WithString("subject", mcp.Required(), mcp.Description("One-line summary."), mcp.MinLength(1), mcp.MaxLength(200)),
			mcp.WithString("description", mcp.Required(), mcp.Description("The customer's request in full."), mcp.MinLength(1), mcp.MaxLength(5000)),
			mcp.WithString("priority", mcp.Description("How urgent the request is."), mcp.Enum(ticketPriorities...), mcp.DefaultString("normal")),
			mcp.WithString("channel", mcp.Description("Where the request came in."), mcp.Enum(ticketChannels...), mcp.DefaultString("web")),
			withOutput[ticketView]()), catalog.Meta{Examples: []catalog.Example{
			example("A hardware fault reported by email", map[string]any{"customer_id": "con_001", "subject": "Monitor flickers",
				"description": "The 27-inch monitor flickers at 60 Hz.", "priority": "high", "channel": "email"}),
		}}),
			Handler: handle(s, s.openTicket)},
		{Tool: withMeta(newTool("support.list_tickets", "List tickets",
			"List support tickets, newest first, filtered by status, priority, assignee, customer or subject text.",
			readOnly,
			join([]mcp.ToolOption{
				mcp.WithString("status", mcp.Description("Only tickets in this status: open (waiting on staff), "+
					"pending (waiting on the customer) or closed."), mcp.Enum(ticketStatuses...)),
				mcp.WithString("priority", mcp.Description("Only tickets with this priority."), mcp.Enum(ticketPriorities...)),
				mcp.WithString("assignee_id", mcp.Description(`Only tickets assigned to this user (usr_...), or "unassigned".`)),
				withCustomerID("Only tickets of this customer", false),
				mcp.WithString("query", mcp.Description("Case-insensitive text matched against the subject."), mcp.MaxLength(200)),
				withOutput[ticketList](),
			}, withPaging())...), catalog.Meta{Examples: []catalog.Example{
			example("Open tickets nobody works on", map[string]any{"status": "open", "assignee_id": "unassigned"}),
			example("Urgent tickets of one agent", map[string]any{"assignee_id": "usr_003", "priority": "urgent"}),
		}}),
			Handler: handle(s, s.listTickets)},
		{Tool: withMeta(newTool("support.get_ticket", "Get ticket",
			"Fetch one ticket with its whole conversation.",
			readOnly, ticketID, withOutput[ticketDetail]()), catalog.Meta{Examples: []catalog.Example{
			example("One ticket and its conversation", map[string]any{"ticket_id": "tkt_001"}),
		}}),
			Handler: handle(s, s.getTicket)},
		{Tool: withMeta(newTool("support.assign_ticket", "Assign ticket",
			"Assign a ticket that is not closed to an active agent or admin, replacing the current assignee.",
			settle, ticketID,
			mcp.WithString("assignee_id", mcp.Required(), mcp.Description("Active agent or admin (usr_...) who will work the ticket.")),
			withOutput[ticketAssignment]()), catalog.Meta{Examples: []catalog.Example{
			example("Give an unassigned ticket to an agent", map[string]any{"ticket_id": "tkt_002", "assignee_id": "usr_004"}),
		}}),
			Handler: handle(s, s.assignTicket)},
		{Tool: withMeta(newTool("support.close_ticket", "Close ticket",
			"Close a ticket with a resolution. Closing a closed ticket returns it unchanged.",
			settle, ticketID,
			mcp.WithString("resolution", mcp.Required(), mcp.Description("How the problem was solved, shown to the customer."),
				mcp.MinLength(1), mcp.MaxLength(2000)),
			withOutput[ticketDetail]()), catalog.Meta{Examples: []catalog.Example{
			example("Close a solved ticket", map[string]any{"ticket_id": "tkt_010", "resolution": "Raised the API rate limit to 600 requests per minute."}),
		}}),
			Handler: handle(s, s.closeTicket)},
		{Tool: withMeta(newTool("support.add_comment", "Comment on ticket",
			"Add a reply or an internal note to a ticket that is not closed. A public reply from staff marks the ticket "+
				"pending; a reply from the customer reopens it.",
			additive, ticketID,
			mcp.WithString("body", mcp.Required(), mcp.Description("Text of the comment."), mcp.MinLength(1), mcp.MaxLength(5000)),
			mcp.WithString("author_id", mcp.Description("Who writes: a user (usr_...) or the ticket's customer (con_...); defaults to the assignee.")),
			mcp.WithBoolean("internal", mcp.Description("Staff-only note that the customer does not see."), mcp.DefaultBool(false)),
			withOutput[addedComment]()), catalog.Meta{Examples: []catalog.Example{
			example("The assignee replies to the customer", map[string]any{"ticket_id": "tkt_010", "body": "We are raising your limit today."}),
			example("An internal note", map[string]any{"ticket_id": "tkt_001", "body": "Replacement headset shipped.", "internal": true}),
		}}),
			Handler: handle(s, s.addComment)},
	}
}

type openTicketArgs struct {
	CustomerID  string `json:"customer_id"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Priority    string `json:"priority"`
	Channel     string `json:"channel"`
}

func (s *store) openTicket(a openTicketArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.contact(a.CustomerID) == nil {
		return notFound("customer", a.CustomerID, "crm.find_contacts")
	}
	if a.Priority == "" {
		a.Priority = "normal"
	}
	if a.Channel == "" {
		a.Channel = "web"
	}
	now := s.now()
	t := &ticket{id: s.newID("tkt"), customerID: a.CustomerID, subject: strings.TrimSpace(a.Subject),
		description: strings.TrimSpace(a.Description), status: "open", priority: a.Priority, channel: a.Channel,
		createdAt: now, updatedAt: now}
	s.tickets = append(s.tickets, t)
	return structured(t.view())
}

type listTicketsArgs struct {
	Status     string `json:"status"`
	Priority   string `json:"priority"`
	AssigneeID string `json:"assignee_id"`
	CustomerID string `json:"customer_id"`
	Query      string `json:"query"`
	Limit      int    `json:"limit"`
	Offset     int    `json:"offset"`
}

func (s *store) listTickets(a listTicketsArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []*ticket
	for i := len(s.tickets) - 1; i >= 0; i-- {
		t := s.tickets[i]
		switch {
		case a.Status != "" && t.status != a.Status,
			a.Priority != "" && t.priority != a.Priority,
			a.AssigneeID == "unassigned" && t.assigneeID != "",
			a.AssigneeID != "" && a.AssigneeID != "unassigned" && t.assigneeID != a.AssigneeID,
			a.CustomerID != "" && t.customerID != a.CustomerID,
			a.Query != "" && !contains(t.subject, a.Query):
			continue
		}
		matches = append(matches, t)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	out := ticketList{Tickets: []ticketView{}, Total: len(matches), NextOffset: next}
	for _, t := range matches[from:to] {
		out.Tickets = append(out.Tickets, t.view())
	}
	return structured(out)
}

type ticketIDArgs struct {
	TicketID string `json:"ticket_id"`
}

func (s *store) getTicket(a ticketIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ticket(a.TicketID)
	if t == nil {
		return notFound("ticket", a.TicketID, "support.list_tickets")
	}
	return structured(t.detail())
}

type assignArgs struct {
	TicketID   string `json:"ticket_id"`
	AssigneeID string `json:"assignee_id"`
}

func (s *store) assignTicket(a assignArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ticket(a.TicketID)
	if t == nil {
		return notFound("ticket", a.TicketID, "support.list_tickets")
	}
	u := s.user(a.AssigneeID)
	switch {
	case u == nil:
		return notFound("user", a.AssigneeID, "users.list")
	case u.status != "active":
		return failf("user %s is %s; only active users can be assigned tickets. Choose an active agent "+
			"(users.list with role agent and status active)", u.id, u.status)
	case u.role != "agent" && u.role != "admin":
		return failf("user %s has role %s; only agents and admins work tickets. Choose an active agent "+
			"(users.list with role agent and status active)", u.id, u.role)
	case t.status == "closed":
		return failf("ticket %s is closed; open a new ticket with support.open_ticket instead", t.id)
	}
	previous := t.assigneeID
	if previous != u.id {
		t.assigneeID, t.updatedAt = u.id, s.now()
	}
	return structured(ticketAssignment{Ticket: t.view(), PreviousAssigneeID: previous})
}

type closeArgs struct {
	TicketID   string `json:"ticket_id"`
	Resolution string `json:"resolution"`
}

func (s *store) closeTicket(a closeArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ticket(a.TicketID)
	if t == nil {
		return notFound("ticket", a.TicketID, "support.list_tickets")
	}
	if t.status != "closed" {
		now := s.now()
		t.status, t.resolution, t.closedAt, t.updatedAt = "closed", strings.TrimSpace(a.Resolution), now, now
	}
	return structured(t.detail())
}

type commentArgs struct {
	TicketID string `json:"ticket_id"`
	Body     string `json:"body"`
	AuthorID string `json:"author_id"`
	Internal bool   `json:"internal"`
}

func (s *store) addComment(a commentArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ticket(a.TicketID)
	if t == nil {
		return notFound("ticket", a.TicketID, "support.list_tickets")
	}
	if t.status == "closed" {
		return failf("ticket %s is closed; open a new ticket with support.open_ticket instead", t.id)
	}
	author := a.AuthorID
	if author == "" {
		author = t.assigneeID
	}
	fromCustomer := author == t.customerID
	switch {
	case author == "":
		return failf("ticket %s is unassigned, so there is no default author; give author_id, "+
			"or assign the ticket first with support.assign_ticket", t.id)
	case fromCustomer && a.Internal:
		return failf("customers cannot write internal notes; leave internal out, or write the note as a user (usr_...)")
	case !fromCustomer && s.user(author) == nil:
		return failf("author %q is neither a user nor the ticket's customer %s; use users.list to look up user ids", author, t.customerID)
	}
	now := s.now()
	c := comment{id: s.newID("cmt"), authorID: author, body: strings.TrimSpace(a.Body), internal: a.Internal, createdAt: now}
	t.comments = append(t.comments, c)
	t.updatedAt = now
	switch {
	case fromCustomer:
		t.status = "open"
	case !a.Internal:
		t.status = "pending"
	}
	return structured(addedComment{TicketID: t.id, Status: t.status, Comment: c.view()})
}
