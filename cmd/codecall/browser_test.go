package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// browserSwitch turns on the console's headless-browser test: it starts
// Chromium and takes about ten seconds, so it runs when CI asks for it
// (.ci/run sets it when Chromium is installed).
const browserSwitch = "CODECALLTEST_BROWSER"

// chromium finds a Chromium or Chrome binary, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv(browserSwitch) == "" {
		t.Skipf("the headless-browser test of the console runs with %s=1 (it needs Chromium)", browserSwitch)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skipf("%s is set but no Chromium is installed (apt-get install chromium); skipping the console's browser test", browserSwitch)
	return ""
}

// TestConsoleInABrowser drives the console in headless Chromium: log in
// with the token, watch a plan wait for approval, approve it, see the
// plan finish and its run's waterfall, and search the audit events. A
// screenshot of each page is written to the test's artifact directory
// (kept with go test -artifacts -outputdir DIR).
func TestConsoleInABrowser(t *testing.T) {
	exe := chromium(t)
	addr := startConsoleServe(t, "60s")
	base := "http://" + addr
	shots := t.ArtifactDir()
	t.Logf("screenshots in %s", shots)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Headless, chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	// Any dialog (alert, confirm) would mean a script ran that the
	// console did not write.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			t.Errorf("a dialog opened: %q", ev.Message)
		}
	}()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	// Log in: a wrong token first, then the right one.
	do("login page", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible(chromedp.ID("token")))
	shot("1-login")
	do("wrong token",
		chromedp.SendKeys(chromedp.ID("token"), "not-the-token-not-the-token"),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("problem")))
	if p := text("#problem"); !strings.Contains(p, "Wrong token") {
		t.Fatalf("after a wrong token the page says %q", p)
	}
	do("log in",
		chromedp.SendKeys(chromedp.ID("token"), consoleToken),
		chromedp.SendKeys(chromedp.ID("name"), "carol"),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.CSS("main[data-live] .empty")))

	// Live updates: a run made while the page is open appears without a
	// reload.
	c := mcpOverHTTP(t, addr)
	quick := <-execute(c, `const p = await callTool("billing.list_payments", {customer_id: "con_001"}); return p.payments.length;`)
	quickRun, _ := quick["runId"].(string)
	if quick["status"] != "ok" || quickRun == "" {
		t.Fatalf("quick plan: %v", quick)
	}
	do("live run list", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`a[href="/console/runs/%s"]`, quickRun))))
	shot("2-runs")

	// A plan that needs approval waits; the approvals page shows it.
	done := execute(c, refundPlan)
	do("pending approval", chromedp.Navigate(base+"/console/approvals"), chromedp.WaitVisible(chromedp.CSS("section.pending")))
	shot("3-approvals")
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("section.pending dd a"), "href"))
	if err != nil || !href.Exists {
		t.Fatalf("the waiting call names no run: %v", err)
	}
	runPage := base + href.Value
	do("waterfall while waiting", chromedp.Navigate(runPage), chromedp.WaitVisible(chromedp.CSS("#waterfall rect.b-waiting")))
	shot("4-run-waiting")
	do("approve",
		chromedp.Navigate(base+"/console/approvals"),
		chromedp.WaitVisible(chromedp.CSS("button.approve")),
		chromedp.Click(chromedp.CSS("button.approve")),
		chromedp.WaitVisible(chromedp.ID("done")))
	select {
	case res := <-done:
		if res["status"] != "ok" || res["approvalState"] != "APPROVED" {
			t.Fatalf("plan after approval: %v", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the plan did not finish after the approval")
	}

	// The finished run: status, script digest, a waterfall of two calls,
	// and the approval by carol through the console.
	do("finished run", chromedp.Navigate(runPage), chromedp.WaitVisible(chromedp.ID("waterfall")))
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#waterfall rect")).map(r => r.getAttribute("class"))`))
	if err != nil {
		t.Fatal(err)
	}
	shot("5-run-finished")
	if status, digest := text("#run-status"), text("#script-digest"); status != "ok" || !strings.HasPrefix(digest, "sha256:") || len(bars) != 2 {
		t.Errorf("run page: status %q, digest %q, bars %v", status, digest, bars)
	}
	calls := text("#calls")
	for _, want := range []string{"billing.list_payments", "billing.refund_payment", "approved via console by carol"} {
		if !strings.Contains(calls, want) {
			t.Errorf("the calls table lacks %q: %s", want, calls)
		}
	}

	// Audit search by decision. The unfiltered table is visible before the
	// click, so wait for the page the search loads before counting rows.
	do("audit search",
		chromedp.Navigate(base+"/console/audit"),
		chromedp.SetValue(chromedp.ID("q-decision"), "approval"),
		chromedp.Click(chromedp.ID("search")))
	loaded := time.Now().Add(15 * time.Second)
	for {
		// Errors while the page navigates are expected: try again.
		state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search + "|" + document.readyState`))
		if err == nil && strings.Contains(state, "decision=approval") && strings.HasSuffix(state, "|complete") {
			break
		}
		if time.Now().After(loaded) {
			t.Fatalf("the audit search did not load: %q, %v", state, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	do("audit results", chromedp.WaitVisible(chromedp.CSS("table.events tr.event")))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.events tr.event").length`))
	if err != nil {
		t.Fatal(err)
	}
	shot("6-audit")
	if rows != 1 {
		t.Errorf("audit search for decision=approval: %d rows, want 1", rows)
	}
}
