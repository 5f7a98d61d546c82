package demo

import (
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// Users: the workspace's own staff, who own contacts and work tickets.

var (
	userRoles    = []string{"admin", "agent", "analyst", "member"}
	userStatuses = []string{"active", "invited", "deactivated"}
)

type userView struct {
	ID          string `json:"id" jsonschema:"User id, e.g. usr_001"`
	Name        string `json:"name" jsonschema:"Full name"`
	Email       string `json:"email" jsonschema:"Work email address"`
	Role        string `json:"role" enum:"userRoles" jsonschema:"Permission role"`
	Team        string `json:"team,omitempty" jsonschema:"Team the user belongs to"`
	Status      string `json:"status" enum:"userStatuses" jsonschema:"active, invited (has not accepted yet) or deactivated"`
	CreatedAt   string `json:"created_at" jsonschema:"When the user was invited (RFC 3339)"`
	LastLoginAt string `json:"last_login_at,omitempty" jsonschema:"Last sign-in (RFC 3339); absent if the user never signed in"`
}

type userDetail struct {
	userView
	AssignedTickets int `json:"assigned_tickets" jsonschema:"Tickets assigned to the user that are not closed (open or pending)"`
}

type deactivatedUser struct {
	User              userView `json:"user" jsonschema:"The user, now deactivated"`
	UnassignedTickets int      `json:"unassigned_tickets" jsonschema:"Tickets that were assigned to the user, not closed, and are now unassigned"`
}

type deletedUser struct {
	ID                   string `json:"id" jsonschema:"Id of the deleted user"`
	Deleted              bool   `json:"deleted" jsonschema:"Always true"`
	UnassignedTickets    int    `json:"unassigned_tickets" jsonschema:"Tickets that were assigned to the user, not closed, and are now unassigned"`
	ContactsWithoutOwner int    `json:"contacts_without_owner" jsonschema:"Contacts the user owned, which now have no owner"`
}

type userList struct {
	Users      []userView `json:"users" jsonschema:"Matching users ordered by id"`
	Total      int        `json:"total" jsonschema:"Number of users matching the filters"`
	NextOffset *int       `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

func (u *user) view() userView {
	return userView{
		ID: u.id, Name: u.name, Email: u.email, Role: u.role, Team: u.team, Status: u.status,
		CreatedAt: stamp(u.createdAt), LastLoginAt: stamp(u.lastLoginAt),
	}
}

func (s *store) userTools() []server.ServerTool {
	userID := mcp.WithString("user_id", mcp.Required(), mcp.Description("Id of the user, e.g. usr_003; users.list returns ids."))
	return []server.ServerTool{
		{Tool: withMeta(newTool("users.list", "List users",
			"List the workspace's users, optionally filtered by role, status, team or a name/email search.",
			readOnly,
			join([]mcp.ToolOption{
				mcp.WithString("query", mcp.Description("Case-insensitive text matched against name and email."), mcp.MaxLength(200)),
				mcp.WithString("role", mcp.Description("Only users with this role."), mcp.Enum(userRoles...)),
				mcp.WithString("status", mcp.Description("Only users in this state."), mcp.Enum(userStatuses...)),
				mcp.WithString("team", mcp.Description("Only users of this team, e.g. support or sales."), mcp.MaxLength(40)),
				withOutput[userList](),
			}, withPaging())...), catalog.Meta{Examples: []catalog.Example{
			example("Active support agents", map[string]any{"role": "agent", "status": "active"}),
		}}),
			Handler: handle(s, s.listUsers)},
		{Tool: withMeta(newTool("users.get", "Get user",
			"Fetch one user with the number of tickets assigned to them that are not closed.",
			readOnly, userID, withOutput[userDetail]()), catalog.Meta{Examples: []catalog.Example{
			example("A support agent and their workload", map[string]any{"user_id": "usr_003"}),
		}}),
			Handler: handle(s, s.getUser)},
		{Tool: withMeta(newTool("users.invite", "Invite user",
			"Invite someone to the workspace: sends them an invitation email, and they appear with status invited "+
				"until they accept. Inviting an email that already has an account fails without sending anything.",
			hints{idempotent: true, openWorld: true},
			mcp.WithString("email", mcp.Required(), mcp.Description("Work email address to send the invitation to."),
				mcp.Pattern(emailPattern), mcp.MaxLength(254)),
			mcp.WithString("name", mcp.Required(), mcp.Description("Full name."), mcp.MinLength(1), mcp.MaxLength(200)),
			mcp.WithString("role", mcp.Description("Permission role."), mcp.Enum(userRoles...), mcp.DefaultString("member")),
			mcp.WithString("team", mcp.Description("Team, e.g. support, sales, finance."), mcp.MaxLength(40)),
			withOutput[userView]()), catalog.Meta{Examples: []catalog.Example{
			example("A new support agent", map[string]any{"email": "new.hire@northwind.example", "name": "New Hire", "role": "agent", "team": "support"}),
		}}),
			Handler: handle(s, s.inviteUser)},
		{Tool: withMeta(newTool("users.update_role", "Change user role",
			"Change a user's permission role. Demoting the last active admin is refused.",
			overwrite, userID,
			mcp.WithString("role", mcp.Required(), mcp.Description("New permission role."), mcp.Enum(userRoles...)),
			withOutput[userView]()), approval(catalog.Meta{Examples: []catalog.Example{
			example("Let an analyst work tickets", map[string]any{"user_id": "usr_009", "role": "agent"}),
		}})),
			Handler: handle(s, s.updateRole)},
		{Tool: withMeta(newTool("users.deactivate", "Deactivate user",
			"Revoke a user's access while keeping their history; their tickets that are not closed become unassigned.",
			overwrite, userID,
			mcp.WithString("reason", mcp.Description("Why the user is deactivated, kept for the audit trail."), mcp.MaxLength(500)),
			withOutput[deactivatedUser]()), approval(catalog.Meta{Examples: []catalog.Example{
			example("Someone left the company", map[string]any{"user_id": "usr_006", "reason": "Left the company"}),
		}})),
			Handler: handle(s, s.deactivateUser)},
		{Tool: withMeta(newTool("users.delete_account", "Delete user account",
			"Permanently delete a user's account. Their tickets that are not closed become unassigned and their contacts "+
				"lose their owner; the last active admin cannot be deleted.",
			overwrite, userID, withOutput[deletedUser]()), approval(catalog.Meta{Examples: []catalog.Example{
			example("Withdraw an invitation that was never accepted", map[string]any{"user_id": "usr_012"}),
		}})),
			Handler: handle(s, s.deleteAccount)},
	}
}

type listUsersArgs struct {
	Query  string `json:"query"`
	Role   string `json:"role"`
	Status string `json:"status"`
	Team   string `json:"team"`
	Limit  int    `json:"limit"`
	Offset int    `json:"offset"`
}

func (s *store) listUsers(a listUsersArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []*user
	for _, u := range s.users {
		if a.Query != "" && !contains(u.name, a.Query) && !contains(u.email, a.Query) {
			continue
		}
		if (a.Role != "" && u.role != a.Role) || (a.Status != "" && u.status != a.Status) ||
			(a.Team != "" && !strings.EqualFold(u.team, a.Team)) {
			continue
		}
		matches = append(matches, u)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	out := userList{Users: []userView{}, Total: len(matches), NextOffset: next}
	for _, u := range matches[from:to] {
		out.Users = append(out.Users, u.view())
	}
	return structured(out)
}

type userIDArgs struct {
	UserID string `json:"user_id"`
}

func (s *store) getUser(a userIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.user(a.UserID)
	if u == nil {
		return notFound("user", a.UserID, "users.list")
	}
	assigned := 0
	for _, t := range s.tickets {
		if t.assigneeID == u.id && t.status != "closed" {
			assigned++
		}
	}
	return structured(userDetail{u.view(), assigned})
}

type inviteArgs struct {
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	Team  string `json:"team"`
}

func (s *store) inviteUser(a inviteArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	email := strings.ToLower(strings.TrimSpace(a.Email))
	for _, u := range s.users {
		if u.email == email {
			return failf("%s already has an account (%s, status %s); nothing was sent. Use users.get with that id to see it, "+
				"or users.update_role to change its role", email, u.id, u.status)
		}
	}
	if a.Role == "" {
		a.Role = "member"
	}
	now := s.now()
	u := &user{id: s.newID("usr"), name: strings.TrimSpace(a.Name), email: email, role: a.Role,
		team: a.Team, status: "invited", createdAt: now}
	s.users = append(s.users, u)
	s.messages = append(s.messages, &message{id: s.newID("msg"), kind: "email", to: email,
		subject: "You're invited to the Northwind workspace",
		body:    "Hi " + u.name + ", you have been invited as " + u.role + ". Accept the invitation to sign in.",
		sentAt:  now})
	return structured(u.view())
}

// activeAdmins counts the active admins other than the user with id except.
func (s *store) activeAdmins(except string) int {
	n := 0
	for _, u := range s.users {
		if u.id != except && u.role == "admin" && u.status == "active" {
			n++
		}
	}
	return n
}

// lastAdmin reports whether removing u's admin rights would leave the
// workspace without an active admin.
func (s *store) lastAdmin(u *user) bool {
	return u.role == "admin" && u.status == "active" && s.activeAdmins(u.id) == 0
}

type updateRoleArgs struct {
	UserID string `json:"user_id"`
	Role   string `json:"role"`
}

func (s *store) updateRole(a updateRoleArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.user(a.UserID)
	if u == nil {
		return notFound("user", a.UserID, "users.list")
	}
	if a.Role != "admin" && s.lastAdmin(u) {
		return failf("%s is the last active admin; make another active user admin with users.update_role first", u.id)
	}
	u.role = a.Role
	return structured(u.view())
}

type deactivateArgs struct {
	UserID string `json:"user_id"`
	Reason string `json:"reason"`
}

// unassign releases the user's tickets that are not closed and returns how
// many there were.
func (s *store) unassign(userID string) int {
	n := 0
	for _, t := range s.tickets {
		if t.assigneeID == userID && t.status != "closed" {
			t.assigneeID = ""
			t.updatedAt = s.now()
			n++
		}
	}
	return n
}

func (s *store) deactivateUser(a deactivateArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.user(a.UserID)
	if u == nil {
		return notFound("user", a.UserID, "users.list")
	}
	if s.lastAdmin(u) {
		return failf("%s is the last active admin and cannot be deactivated; make another active user admin with users.update_role first", u.id)
	}
	u.status = "deactivated"
	unassigned := s.unassign(u.id)
	return structured(deactivatedUser{User: u.view(), UnassignedTickets: unassigned})
}

func (s *store) deleteAccount(a userIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.users, func(u *user) bool { return u.id == a.UserID })
	if i < 0 {
		return notFound("user", a.UserID, "users.list")
	}
	u := s.users[i]
	if s.lastAdmin(u) {
		return failf("%s is the last active admin and cannot be deleted; make another active user admin with users.update_role first", u.id)
	}
	unassigned := s.unassign(u.id)
	orphaned := 0
	for _, c := range s.contacts {
		if c.ownerID == u.id {
			c.ownerID = ""
			orphaned++
		}
	}
	s.users = slices.Delete(s.users, i, i+1)
	return structured(deletedUser{ID: u.id, Deleted: true, UnassignedTickets: unassigned, ContactsWithoutOwner: orphaned})
}
