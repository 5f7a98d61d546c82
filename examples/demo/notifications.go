package demo

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Notifications: email and Slack. In a real deployment these reach people
// outside the system, which is what their open-world hint says; the demo
// keeps every message in an outbox that notifications.list_sent reads.

type messageView struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	To         string `json:"to"`
	Subject    string `json:"subject,omitempty"`
	Body       string `json:"body"`
	CustomerID string `json:"customer_id,omitempty"`
	Status     string `json:"status"`
	SentAt     string `json:"sent_at"`
}

func (m *message) view() messageView {
	return messageView{ID: m.id, Kind: m.kind, To: m.to, Subject: m.subject, Body: m.body,
		CustomerID: m.customerID, Status: "sent", SentAt: stamp(m.sentAt)}
}

func (s *store) notificationTools() []server.ServerTool {
	return []server.ServerTool{
		{Tool: newTool("notifications.send_email", "Send email",
			"Send a plain-text email, optionally linked to a customer so it shows on their timeline. "+
				"Each call sends another email.",
			outbound,
			mcp.WithString("to", mcp.Required(), mcp.Description("Recipient email address."), mcp.Pattern(emailPattern), mcp.MaxLength(254)),
			mcp.WithString("subject", mcp.Required(), mcp.Description("Subject line."), mcp.MinLength(1), mcp.MaxLength(200)),
			mcp.WithString("body", mcp.Required(), mcp.Description("Plain-text body."), mcp.MinLength(1), mcp.MaxLength(20000)),
			mcp.WithString("customer_id", mcp.Description("Customer the email is about (contact id)."))),
			Handler: handle(s, s.sendEmail)},
		{Tool: newTool("notifications.send_slack_message", "Send Slack message",
			"Post a message to a channel of the company's Slack workspace. Each call posts another message.",
			outbound,
			mcp.WithString("channel", mcp.Required(), mcp.Description("Channel name with its leading #, e.g. #support-escalations."),
				mcp.Pattern(`^#[a-z0-9][a-z0-9_-]{0,79}$`)),
			mcp.WithString("text", mcp.Required(), mcp.Description("Message text; Slack markdown is allowed."), mcp.MinLength(1), mcp.MaxLength(4000))),
			Handler: handle(s, s.sendSlack)},
		{Tool: newTool("notifications.list_sent", "List sent notifications",
			"List emails and Slack messages sent so far, newest first.",
			readOnly,
			join([]mcp.ToolOption{
				mcp.WithString("kind", mcp.Description("Only emails or only Slack messages."), mcp.Enum("email", "slack")),
				mcp.WithString("to", mcp.Description("Only messages to this email address or Slack channel.")),
			}, withPaging())...),
			Handler: handle(s, s.listSent)},
	}
}

type emailArgs struct {
	To         string `json:"to"`
	Subject    string `json:"subject"`
	Body       string `json:"body"`
	CustomerID string `json:"customer_id"`
}

func (s *store) sendEmail(a emailArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.CustomerID != "" && s.contact(a.CustomerID) == nil {
		return notFound("customer", a.CustomerID, "crm.find_contacts")
	}
	m := &message{id: s.newID("msg"), kind: "email", to: strings.ToLower(strings.TrimSpace(a.To)), subject: a.Subject,
		body: a.Body, customerID: a.CustomerID, sentAt: s.now()}
	s.messages = append(s.messages, m)
	return jsonText(m.view())
}

type slackArgs struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

func (s *store) sendSlack(a slackArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &message{id: s.newID("msg"), kind: "slack", to: a.Channel, body: a.Text, sentAt: s.now()}
	s.messages = append(s.messages, m)
	return jsonText(m.view())
}

type listSentArgs struct {
	Kind   string `json:"kind"`
	To     string `json:"to"`
	Limit  int    `json:"limit"`
	Offset int    `json:"offset"`
}

func (s *store) listSent(a listSentArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []*message
	for i := len(s.messages) - 1; i >= 0; i-- {
		m := s.messages[i]
		if (a.Kind != "" && m.kind != a.Kind) || (a.To != "" && !strings.EqualFold(m.to, a.To)) {
			continue
		}
		matches = append(matches, m)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	views := []messageView{}
	for _, m := range matches[from:to] {
		views = append(views, m.view())
	}
	out := map[string]any{"messages": views, "total": len(matches)}
	if next != nil {
		out["next_offset"] = *next
	}
	return jsonText(out)
}
