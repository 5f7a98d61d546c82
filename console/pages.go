package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/codecall-go/codecall/policy"
)

var funcs = template.FuncMap{
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"ms": func(f float64) string {
		switch {
		case f >= 1000:
			return fmt.Sprintf("%.2f s", f/1000)
		case f >= 10:
			return fmt.Sprintf("%.0f ms", f)
		}
		return fmt.Sprintf("%.1f ms", f)
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("15:04:05.000")
	},
	"until": func(t time.Time) string {
		d := time.Until(t).Round(time.Second)
		if d < 0 {
			d = 0
		}
		return d.String()
	},
}

// common is what every page shows: who is logged in, the form token, how
// many calls wait, and the store's version (for live updates).
type common struct {
	Title   string
	Nav     string
	User    string
	CSRF    string
	Waiting int
	Version uint64
	Live    bool
}

func (c *Console) common(ctx context.Context, u who, title, nav string) common {
	cm := common{Title: title, Nav: nav, Version: c.store.Version(), Live: true, User: "token"}
	if u.sess != nil {
		cm.User, cm.CSRF = u.sess.name, u.sess.csrf
	}
	if c.approvals != nil {
		// A queue that cannot be listed shows no count here; the
		// approvals page says why.
		if p, err := c.approvals.Pending(ctx); err == nil {
			cm.Waiting = len(p)
		}
	}
	return cm
}

func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	if err := c.pages.ExecuteTemplate(&b, name, data); err != nil {
		c.log.Error("codecall console: rendering a page failed", "page", name, "error", err)
		http.Error(w, "codecall console: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, b.String())
}

// loginForm shows the form and sets the cookie that holds its CSRF token.
func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	c.showLogin(w, http.StatusOK, "")
}

func (c *Console) showLogin(w http.ResponseWriter, status int, problem string) {
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: Prefix + "/login", HttpOnly: true, Secure: true,
		SameSite: http.SameSiteStrictMode, MaxAge: 600})
	c.render(w, status, "login.html", struct {
		common
		Problem string
	}{common{Title: "Log in", CSRF: tok}, problem})
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(loginCookie)
	if err != nil || r.ParseForm() != nil || !sameString(r.PostFormValue("csrf"), ck.Value) {
		c.showLogin(w, http.StatusForbidden, "The form expired or did not come from this page; try again.")
		return
	}
	if !c.tokenMatches(r.PostFormValue("token")) {
		c.log.Warn("codecall console: refused a login with a wrong token", "remote", r.RemoteAddr)
		c.showLogin(w, http.StatusUnauthorized, "Wrong token.")
		return
	}
	name := operatorName(r.PostFormValue("name"))
	id, _ := c.sessions.open(name, c.now())
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: Prefix, HttpOnly: true, Secure: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL / time.Second)})
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: Prefix + "/login", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
	c.log.Info("codecall console: operator logged in", "name", name, "remote", r.RemoteAddr)
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}

// operatorName keeps a name an operator gives to something a log line and
// a page can hold: printable, at most 64 bytes, "operator" when empty.
func operatorName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(s))
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "")
	}
	if s == "" {
		return "operator"
	}
	return s
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, u who) {
	if u.sess != nil {
		c.sessions.close(u.cookie)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}

// runRow is a run in the list.
type runRow struct {
	Run
	Calls    int
	Denied   int
	Approved int
}

func (c *Console) runsPage(w http.ResponseWriter, r *http.Request, u who) {
	runs := c.store.Runs()
	rows := make([]runRow, len(runs))
	for i, run := range runs {
		rows[i] = runRow{Run: run, Calls: len(run.Calls)}
		for _, call := range run.Calls {
			if call.Decision == "deny" {
				rows[i].Denied++
			}
			if call.Approval == "approved" || call.Approval == "trusted" {
				rows[i].Approved++
			}
		}
	}
	c.render(w, http.StatusOK, "runs.html", struct {
		common
		Runs []runRow
	}{c.common(r.Context(), u, "Runs", "runs"), rows})
}

// bar is one call in the waterfall, in the SVG's units (1000 wide).
type bar struct {
	Call   *Call
	Y      int
	X, W   float64
	TextY  int
	Offset float64 // ms from the run's start
	Class  string
}

const (
	barHeight = 22
	barWidth  = 1000.0
)

func (c *Console) runPage(w http.ResponseWriter, r *http.Request, u who) {
	run, ok := c.store.Run(r.PathValue("id"))
	if !ok {
		c.render(w, http.StatusNotFound, "missing.html", struct {
			common
			What string
		}{c.common(r.Context(), u, "Run not found", "runs"), "No run " + r.PathValue("id") + " is kept: it never existed here, or older runs pushed it out (console.maxRuns)."})
		return
	}
	end := run.End
	if end.IsZero() {
		end = c.now()
	}
	for _, call := range run.Calls {
		e := call.End
		if e.IsZero() {
			e = c.now()
		}
		if e.After(end) {
			end = e
		}
	}
	total := float64(end.Sub(run.Start)) / float64(time.Millisecond)
	if total <= 0 {
		total = 1
	}
	bars := make([]bar, len(run.Calls))
	for i, call := range run.Calls {
		ce := call.End
		if ce.IsZero() {
			ce = c.now()
		}
		off := float64(call.Start.Sub(run.Start)) / float64(time.Millisecond)
		dur := float64(ce.Sub(call.Start)) / float64(time.Millisecond)
		if off < 0 {
			off = 0
		}
		b := bar{Call: call, Y: i * barHeight, TextY: i*barHeight + 15, Offset: off,
			X: off / total * barWidth, W: dur / total * barWidth, Class: call.State()}
		if b.W < 2 {
			b.W = 2
		}
		if b.X+b.W > barWidth {
			b.X = barWidth - b.W
		}
		if call.Decision == "deny" || call.Approval == "denied" || call.Approval == "expired" {
			b.Class = "denied"
		}
		bars[i] = b
	}
	c.render(w, http.StatusOK, "run.html", struct {
		common
		Run     Run
		Bars    []bar
		Height  int
		TotalMs float64
	}{c.common(r.Context(), u, "Run "+run.ID, "runs"), run, bars, len(bars)*barHeight + 4, total})
}

func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request, u who) {
	var pending []policy.PendingApproval
	var problem string
	status := http.StatusOK
	if c.approvals != nil {
		var err error
		if pending, err = c.approvals.Pending(r.Context()); err != nil {
			c.log.Warn("codecall console: the waiting calls cannot be listed", "error", err)
			problem, status = err.Error(), http.StatusServiceUnavailable
		}
	}
	c.render(w, status, "approvals.html", struct {
		common
		Enabled bool
		Pending []policy.PendingApproval
		Problem string
		Done    string
	}{c.common(r.Context(), u, "Approvals", "approvals"), c.approvals != nil, pending, problem, r.URL.Query().Get("done")})
}

// answerForm is an operator's approve or deny from the approvals page.
func (c *Console) answerForm(w http.ResponseWriter, r *http.Request, u who) {
	approve, err := decision(r.PostFormValue("decision"))
	if err != nil {
		http.Error(w, "codecall console: "+err.Error(), http.StatusBadRequest)
		return
	}
	name := "token"
	if u.sess != nil {
		name = u.sess.name
	}
	id := r.PathValue("id")
	if err := c.answer(r.Context(), id, approve, policy.ChannelConsole, name); err != nil {
		done := "gone"
		if errors.Is(err, policy.ErrQueueUnavailable) {
			c.log.Warn("codecall console: an operator's answer was not recorded", "id", id, "error", err)
			done = "down"
		}
		http.Redirect(w, r, Prefix+"/approvals?done="+done, http.StatusSeeOther)
		return
	}
	done := "denied"
	if approve {
		done = "approved"
	}
	http.Redirect(w, r, Prefix+"/approvals?done="+done, http.StatusSeeOther)
}

func decision(s string) (approve bool, err error) {
	switch s {
	case "approve":
		return true, nil
	case "deny":
		return false, nil
	}
	return false, fmt.Errorf("decision must be approve or deny, got %q", s)
}

func (c *Console) answer(ctx context.Context, id string, approve bool, ch policy.Channel, by string) error {
	if c.approvals == nil {
		return errors.New("approvals out of band are not enabled on this server")
	}
	if err := c.approvals.Answer(ctx, id, approve, ch, by); err != nil {
		return err
	}
	c.log.Info("codecall console: an operator answered an approval", "id", id, "approve", approve, "channel", string(ch), "by", by)
	return nil
}

func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, u who) {
	q := Query{Run: r.URL.Query().Get("run"), Session: r.URL.Query().Get("session"),
		Tool: r.URL.Query().Get("tool"), Decision: r.URL.Query().Get("decision")}
	c.render(w, http.StatusOK, "audit.html", struct {
		common
		Q      Query
		Events []Event
	}{c.common(r.Context(), u, "Audit", "audit"), q, c.store.Search(q)})
}

type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// versionAPI answers the store's version once it is above since, waiting
// at most wait seconds (at most 25): the pages' live updates poll it.
func (c *Console) versionAPI(w http.ResponseWriter, r *http.Request, _ who) {
	since, _ := strconv.ParseUint(r.URL.Query().Get("since"), 10, 64)
	wait, _ := strconv.Atoi(r.URL.Query().Get("wait"))
	wait = min(max(wait, 0), 25)
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(wait)*time.Second)
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	writeJSON(w, http.StatusOK, map[string]uint64{"version": c.store.Wait(ctx, since)})
}

// ApprovalList is the JSON of GET /console/api/approvals.
type ApprovalList struct {
	Approvals []policy.PendingApproval `json:"approvals"`
}

// AnswerRequest is the JSON body of POST /console/api/approvals/{id}.
type AnswerRequest struct {
	// Decision is approve or deny.
	Decision string `json:"decision"`
	// By names the operator, for the audit log.
	By string `json:"by,omitempty"`
}

// AnswerResponse is the JSON answer of POST /console/api/approvals/{id}.
type AnswerResponse struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
}

func (c *Console) listAPI(w http.ResponseWriter, r *http.Request, _ who) {
	if c.approvals == nil {
		writeJSON(w, http.StatusNotFound, apiError{Error: "approvals out of band are not enabled on this server (console.enabled)"})
		return
	}
	pending, err := c.approvals.Pending(r.Context())
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, ApprovalList{Approvals: pending})
}

// answerAPI is codecall approvals approve|deny: answers through the API
// are recorded as channel cli.
func (c *Console) answerAPI(w http.ResponseWriter, r *http.Request, _ who) {
	var req AnswerRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "the body must be JSON {\"decision\": \"approve\"|\"deny\", \"by\": NAME}: " + err.Error()})
		return
	}
	approve, err := decision(req.Decision)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: err.Error()})
		return
	}
	id := r.PathValue("id")
	switch err := c.answer(r.Context(), id, approve, policy.ChannelCLI, operatorName(req.By)); {
	case errors.Is(err, policy.ErrNoPendingApproval):
		writeJSON(w, http.StatusNotFound, apiError{Error: err.Error()})
		return
	case errors.Is(err, policy.ErrQueueUnavailable):
		// Not recorded: the operator may try again once the store is back.
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
		return
	case err != nil:
		writeJSON(w, http.StatusNotFound, apiError{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, AnswerResponse{ID: id, Decision: req.Decision})
}
