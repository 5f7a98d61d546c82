package demo

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// Notifications: email and Slack. In a real deployment these reach people
// outside the system, which is what their open-world hint says; the demo
// keeps every message in an outbox that notifications.list_sent reads.

var messageKinds = []string{"email", "slack"}

type messageView struct {
	ID         string `json:"id" jsonschema:"Message id, e.g. msg_001"`
	Kind       string `json:"kind" enum:"messageKinds" jsonschema:"Email or Slack message"`
	To         string `json:"to" jsonschema:"Recipient: an email address, or a Slack channel such as #support-escalations"`
	Subject    string `json:"subject,omitempty" jsonschema:"Subject line; emails only"`
	Body       string `json:"body" jsonschema:"Text of the message"`
	CustomerID string `json:"customer_id,omitempty" jsonschema:"Customer (con_...) an email is about; absent when it is about none"`
	Status     string `json:"status" enum:"messageStatuses" jsonschema:"Delivery status"`
	SentAt     string `json:"sent_at" jsonschema:"When the message was sent (RFC 3339)"`
}

type messageList struct {
	Messages   []messageView `json:"messages" jsonschema:"Matching messages, newest first"`
	Total      int           `json:"total" jsonschema:"Number of messages matching the filters"`
	NextOffset *int          `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

func (m *message) view() messageView {
	return messageView{ID: m.id, Kind: m.kind, To: m.to, Subject: m.subject, Body: m.body,
		CustomerID: m.customerID, Status: "sent", SentAt: stamp(m.sentAt)}
}

func (s *store) notificationTools() []server.ServerTool {
	return []server.ServerTool{
		{Tool: withMeta(newTool("notifications.send_email", "Send email",
			"Send a plain-text email, optionally linked to a customer so it shows on their timeline. "+
				"Each call sends another email.",
			outbound,
			mcp.WithString("to", mcp.Required(), mcp.Description("Recipient email address."), mcp.Pattern(emailPattern), mcp.MaxLength(254)),
			mcp.WithString("subject", mcp.Required(), mcp.Description("Subject line."), mcp.MinLength(1), mcp.MaxLength(200)),
			mcp.WithString("body", mcp.Required(), mcp.Description("Plain-text body."), mcp.MinLength(1), mcp.MaxLength(20000)),
			withCustomerID("Customer the email is about", false),
			withOutput[messageView]()), catalog.Meta{Examples: []catalog.Example{
			example("A renewal reminder to a customer", map[string]any{"to": "ava.anderson@acme.example", "subject": "Your renewal",
				"body": "Hi Ava, your subscription renews on the 1st.", "customer_id": "con_001"}),
		}}),
			Handler: handle(s, s.sendEmail)},
		{Tool: withMeta(newTool("notifications.send_slack_message", "Send Slack message",
			"Post a message to a channel of the company's Slack workspace. Each call posts another message.",
			outbound,
			mcp.WithString("channel", mcp.Required(), mcp.Description("Channel name with its leading #, e.g. #support-escalations."),
				mcp.Pattern(`^#[a-z0-9][a-z0-9_-]{0,79}$`)),
			mcp.WithString("text", mcp.Required(), mcp.Description("Message text; Slack markdown is allowed."), mcp.MinLength(1), mcp.MaxLength(4000)),
			withOutput[messageView]()), catalog.Meta{Examples: []catalog.Example{
			example("Escalate a ticket", map[string]any{"channel": "#support-escalations", "text": "*tkt_002* has no assignee yet."}),
		}}),
			Handler: handle(s, s.sendSlack)},
		{Tool: withMeta(newTool("notifications.list_sent", "List sent notifications",
			"List emails and Slack messages sent so far, newest first.",
			readOnly,
			join([]mcp.ToolOption{
				mcp.WithString("kind", mcp.Description("Only emails or only Slack messages."), mcp.Enum(messageKinds...)),
				mcp.WithString("to", mcp.Description("Only messages to this email address or Slack channel (with its #).")),
				withOutput[messageList](),
			}, withPaging())...), catalog.Meta{Examples: []catalog.Example{
			example("The latest emails", map[string]any{"kind": "email", "limit": 5}),
		}}),
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
	return structured(m.view())
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
	return structured(m.view())
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
	out := messageList{Messages: []messageView{}, Total: len(matches), NextOffset: next}
	for _, m := range matches[from:to] {
		out.Messages = append(out.Messages, m.view())
	}
	return structured(out)
}
