package demo

import (
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// CRM: the people the business sells to. A contact's id doubles as the
// customer_id of billing, support, analytics and notifications.

var contactStatuses = []string{"lead", "customer", "churned"}

const emailPattern = `^[^@\s]+@[^@\s]+\.[^@\s]+$`

type noteView struct {
	ID        string `json:"id" jsonschema:"Note id"`
	AuthorID  string `json:"author_id,omitempty" jsonschema:"Workspace user (usr_...) who wrote the note; absent when nobody is named"`
	Body      string `json:"body" jsonschema:"Text of the note"`
	CreatedAt string `json:"created_at" jsonschema:"When the note was written (RFC 3339)"`
}

type contactView struct {
	ID        string   `json:"id" jsonschema:"Contact id, also used as customer_id by billing, support and analytics"`
	Name      string   `json:"name" jsonschema:"Full name"`
	Email     string   `json:"email" jsonschema:"Email address"`
	Phone     string   `json:"phone,omitempty" jsonschema:"Phone number"`
	Company   string   `json:"company,omitempty" jsonschema:"Company the contact works for"`
	Title     string   `json:"title,omitempty" jsonschema:"Job title"`
	Status    string   `json:"status" enum:"contactStatuses" jsonschema:"Lifecycle stage"`
	Tags      []string `json:"tags" jsonschema:"Segmentation tags such as enterprise, smb, vip"`
	OwnerID   string   `json:"owner_id,omitempty" jsonschema:"Id of the workspace user who owns the relationship"`
	NoteCount int      `json:"note_count" jsonschema:"Number of notes on the contact; crm.get_contact returns them"`
	CreatedAt string   `json:"created_at" jsonschema:"When the contact was created (RFC 3339)"`
	UpdatedAt string   `json:"updated_at" jsonschema:"When the contact last changed (RFC 3339)"`
}

// contactDetail is a contact with its notes, as crm.get_contact returns it.
type contactDetail struct {
	contactView
	Notes []noteView `json:"notes" jsonschema:"Notes, oldest first; empty when there are none"`
}

type deletedContact struct {
	ID      string `json:"id" jsonschema:"Id of the deleted contact"`
	Deleted bool   `json:"deleted" jsonschema:"Always true"`
}

type addedNote struct {
	ContactID string   `json:"contact_id" jsonschema:"Contact the note was added to"`
	Note      noteView `json:"note" jsonschema:"The new note"`
}

type contactList struct {
	Contacts   []contactView `json:"contacts" jsonschema:"Matching contacts ordered by id"`
	Total      int           `json:"total" jsonschema:"Number of contacts matching the filters"`
	NextOffset *int          `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

func (c *contact) view() contactView {
	return contactView{
		ID: c.id, Name: c.name, Email: c.email, Phone: c.phone, Company: c.company,
		Title: c.title, Status: c.status, Tags: append([]string{}, c.tags...), OwnerID: c.ownerID,
		NoteCount: len(c.notes), CreatedAt: stamp(c.createdAt), UpdatedAt: stamp(c.updatedAt),
	}
}

func (c *contact) detail() contactDetail {
	d := contactDetail{contactView: c.view(), Notes: []noteView{}}
	for _, n := range c.notes {
		d.Notes = append(d.Notes, n.view())
	}
	return d
}

func (n note) view() noteView {
	return noteView{ID: n.id, AuthorID: n.authorID, Body: n.body, CreatedAt: stamp(n.createdAt)}
}

func (s *store) crmTools() []server.ServerTool {
	contactID := mcp.WithString("contact_id", mcp.Required(),
		mcp.Description("Id of the contact, e.g. con_001; crm.find_contacts returns ids."))
	tags := mcp.WithArray("tags", mcp.Description("Segmentation tags, e.g. enterprise, smb, vip, newsletter."),
		mcp.WithStringItems(mcp.MinLength(1), mcp.MaxLength(40)), mcp.MaxItems(10))

	find := newTool("crm.find_contacts", "Find contacts",
		"Search CRM contacts by name, email or company, optionally filtered by lifecycle status, tag or owner. "+
			"Results are ordered by id and paginated.",
		readOnly,
		join([]mcp.ToolOption{
			mcp.WithString("query", mcp.Description("Case-insensitive text matched against name, email and company."), mcp.MaxLength(200)),
			mcp.WithString("status", mcp.Description("Only contacts in this lifecycle stage."), mcp.Enum(contactStatuses...)),
			mcp.WithString("tag", mcp.Description("Only contacts that carry this tag."), mcp.MaxLength(40)),
			mcp.WithString("owner_id", mcp.Description("Only contacts owned by this workspace user (usr_...).")),
			withOutput[contactList](),
		}, withPaging())...)
	find = withMeta(find, catalog.Meta{Examples: []catalog.Example{
		example("Paying customers at Acme", map[string]any{"query": "acme", "status": "customer"}),
		example("VIP contacts, second page", map[string]any{"tag": "vip", "limit": 10, "offset": 10}),
	}})

	return []server.ServerTool{
		{Tool: find, Handler: handle(s, s.findContacts)},
		{Tool: withMeta(newTool("crm.get_contact", "Get contact",
			"Fetch one contact with all of its notes.",
			readOnly, contactID, withOutput[contactDetail]()), catalog.Meta{Examples: []catalog.Example{
			example("One contact and its notes", map[string]any{"contact_id": "con_001"}),
		}}),
			Handler: handle(s, s.getContact)},
		{Tool: withMeta(newTool("crm.create_contact", "Create contact",
			"Create a CRM contact. Duplicate emails are allowed, as people move between companies; "+
				"search first with crm.find_contacts to avoid them.",
			additive,
			mcp.WithString("name", mcp.Required(), mcp.Description("Full name."), mcp.MinLength(1), mcp.MaxLength(200)),
			mcp.WithString("email", mcp.Required(), mcp.Description("Email address."), mcp.Pattern(emailPattern), mcp.MaxLength(254)),
			mcp.WithString("phone", mcp.Description("Phone number in any format."), mcp.MaxLength(40)),
			mcp.WithString("company", mcp.Description("Company the contact works for."), mcp.MaxLength(200)),
			mcp.WithString("title", mcp.Description("Job title."), mcp.MaxLength(200)),
			mcp.WithString("status", mcp.Description("Lifecycle stage; new contacts are usually leads."),
				mcp.Enum(contactStatuses...), mcp.DefaultString("lead")),
			tags,
			mcp.WithString("owner_id", mcp.Description("Active workspace user (usr_...) who owns the relationship.")),
			withOutput[contactView]()), catalog.Meta{Examples: []catalog.Example{
			example("A new lead owned by a sales rep", map[string]any{"name": "Ada Lovelace", "email": "ada@analytical.example",
				"company": "Analytical Engines", "tags": []any{"smb", "newsletter"}, "owner_id": "usr_010"}),
		}}),
			Handler: handle(s, s.createContact)},
		{Tool: withMeta(newTool("crm.update_contact", "Update contact",
			"Change fields of a contact; fields left out keep their value and tags, when given, replace the old list.",
			overwrite,
			contactID,
			mcp.WithString("name", mcp.Description("New full name."), mcp.MinLength(1), mcp.MaxLength(200)),
			mcp.WithString("email", mcp.Description("New email address."), mcp.Pattern(emailPattern), mcp.MaxLength(254)),
			mcp.WithString("phone", mcp.Description("New phone number."), mcp.MaxLength(40)),
			mcp.WithString("company", mcp.Description("New company."), mcp.MaxLength(200)),
			mcp.WithString("title", mcp.Description("New job title."), mcp.MaxLength(200)),
			mcp.WithString("status", mcp.Description("New lifecycle stage."), mcp.Enum(contactStatuses...)),
			tags,
			mcp.WithString("owner_id", mcp.Description("New owner, an active workspace user (usr_...).")),
			withOutput[contactView]()), catalog.Meta{Examples: []catalog.Example{
			example("A lead becomes a paying customer", map[string]any{"contact_id": "con_006", "status": "customer"}),
			example("Replace the tags", map[string]any{"contact_id": "con_001", "tags": []any{"enterprise", "vip"}}),
		}}),
			Handler: handle(s, s.updateContact)},
		{Tool: withMeta(newTool("crm.delete_contact", "Delete contact",
			"Permanently delete a contact and its notes. Contacts with unpaid (open or overdue) invoices cannot be deleted; "+
				"their paid and void invoices, payments and tickets keep the old id.",
			overwrite, contactID, withOutput[deletedContact]()), approval(catalog.Meta{Examples: []catalog.Example{
			example("Delete a lead that was never billed", map[string]any{"contact_id": "con_008"}),
		}})),
			Handler: handle(s, s.deleteContact)},
		{Tool: withMeta(newTool("crm.add_note", "Add note to contact",
			"Append a note to a contact's timeline, e.g. a call summary.",
			additive,
			contactID,
			mcp.WithString("body", mcp.Required(), mcp.Description("Text of the note."), mcp.MinLength(1), mcp.MaxLength(4000)),
			mcp.WithString("author_id", mcp.Description("Workspace user (usr_...) writing the note; defaults to the contact's owner.")),
			withOutput[addedNote]()), catalog.Meta{Examples: []catalog.Example{
			example("Record a call summary", map[string]any{"contact_id": "con_001", "body": "Call: wants a quote for 20 more seats."}),
		}}),
			Handler: handle(s, s.addNote)},
	}
}

type findContactsArgs struct {
	Query   string `json:"query"`
	Status  string `json:"status"`
	Tag     string `json:"tag"`
	OwnerID string `json:"owner_id"`
	Limit   int    `json:"limit"`
	Offset  int    `json:"offset"`
}

func (s *store) findContacts(a findContactsArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []*contact
	for _, c := range s.contacts {
		if a.Query != "" && !contains(c.name, a.Query) && !contains(c.email, a.Query) && !contains(c.company, a.Query) {
			continue
		}
		if a.Status != "" && c.status != a.Status {
			continue
		}
		if a.Tag != "" && !slices.ContainsFunc(c.tags, func(t string) bool { return strings.EqualFold(t, a.Tag) }) {
			continue
		}
		if a.OwnerID != "" && c.ownerID != a.OwnerID {
			continue
		}
		matches = append(matches, c)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	out := contactList{Contacts: []contactView{}, Total: len(matches), NextOffset: next}
	for _, c := range matches[from:to] {
		out.Contacts = append(out.Contacts, c.view())
	}
	return structured(out)
}

type contactIDArgs struct {
	ContactID string `json:"contact_id"`
}

func (s *store) getContact(a contactIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.contact(a.ContactID)
	if c == nil {
		return notFound("contact", a.ContactID, "crm.find_contacts")
	}
	return structured(c.detail())
}

type contactFields struct {
	Name    *string  `json:"name"`
	Email   *string  `json:"email"`
	Phone   *string  `json:"phone"`
	Company *string  `json:"company"`
	Title   *string  `json:"title"`
	Status  *string  `json:"status"`
	Tags    []string `json:"tags"`
	OwnerID *string  `json:"owner_id"`
}

// checkOwner reports an error result when id names no active user.
func (s *store) checkOwner(id string) *mcp.CallToolResult {
	u := s.user(id)
	if u == nil {
		return notFound("user", id, "users.list")
	}
	if u.status == "deactivated" {
		return failf("user %q is deactivated and cannot own contacts; choose an active user (users.list with status active)", id)
	}
	return nil
}

func (s *store) createContact(a contactFields) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.OwnerID != nil && *a.OwnerID != "" {
		if res := s.checkOwner(*a.OwnerID); res != nil {
			return res
		}
	}
	now := s.now()
	c := &contact{id: s.newID("con"), status: "lead", tags: []string{}, createdAt: now, updatedAt: now}
	c.apply(a)
	s.contacts = append(s.contacts, c)
	return structured(c.view())
}

func (c *contact) apply(a contactFields) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
		}
	}
	set(&c.name, a.Name)
	set(&c.email, a.Email)
	set(&c.phone, a.Phone)
	set(&c.company, a.Company)
	set(&c.title, a.Title)
	set(&c.status, a.Status)
	set(&c.ownerID, a.OwnerID)
	if a.Tags != nil {
		c.tags = slices.Compact(slices.Sorted(slices.Values(a.Tags)))
	}
}

type updateContactArgs struct {
	ContactID string `json:"contact_id"`
	contactFields
}

func (s *store) updateContact(a updateContactArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.contact(a.ContactID)
	if c == nil {
		return notFound("contact", a.ContactID, "crm.find_contacts")
	}
	f := a.contactFields
	if f.Name == nil && f.Email == nil && f.Phone == nil && f.Company == nil && f.Title == nil &&
		f.Status == nil && f.Tags == nil && f.OwnerID == nil {
		return failf("nothing to update: give at least one field to change besides contact_id")
	}
	if f.OwnerID != nil && *f.OwnerID != "" {
		if res := s.checkOwner(*f.OwnerID); res != nil {
			return res
		}
	}
	c.apply(f)
	c.updatedAt = s.now()
	return structured(c.view())
}

func (s *store) deleteContact(a contactIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.contacts, func(c *contact) bool { return c.id == a.ContactID })
	if i < 0 {
		return notFound("contact", a.ContactID, "crm.find_contacts")
	}
	now := s.now()
	for _, inv := range s.invoices {
		if inv.customerID != a.ContactID || inv.status != "open" {
			continue
		}
		fix := "collect the rest with billing.record_payment"
		if inv.paidCents == 0 {
			fix = "collect it with billing.record_payment or cancel it with billing.void_invoice"
		}
		return failf("contact %q has unpaid invoice %s (%s, %d cents due); %s, then delete the contact",
			a.ContactID, inv.id, inv.statusAt(now), inv.due(), fix)
	}
	s.contacts = slices.Delete(s.contacts, i, i+1)
	return structured(deletedContact{ID: a.ContactID, Deleted: true})
}

type addNoteArgs struct {
	ContactID string `json:"contact_id"`
	Body      string `json:"body"`
	AuthorID  string `json:"author_id"`
}

func (s *store) addNote(a addNoteArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.contact(a.ContactID)
	if c == nil {
		return notFound("contact", a.ContactID, "crm.find_contacts")
	}
	author := a.AuthorID
	if author == "" {
		author = c.ownerID
	} else if s.user(author) == nil {
		return notFound("user", author, "users.list")
	}
	n := note{id: s.newID("note"), authorID: author, body: strings.TrimSpace(a.Body), createdAt: s.now()}
	c.notes = append(c.notes, n)
	c.updatedAt = n.createdAt
	return structured(addedNote{ContactID: c.id, Note: n.view()})
}
