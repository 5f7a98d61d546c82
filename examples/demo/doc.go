// Package demo is a realistic multi-app MCP server: a small SaaS back office
// with a CRM, workspace users, billing, support, analytics, inventory and
// notifications, 39 tools in all. The CodeCall CLI serves it when no upstream
// is configured, and CodeCall's tests and benchmarks use it as a server with
// many tools whose results are worth joining and filtering in a plan.
//
// Every tool works on an in-memory store that belongs to one server, so two
// servers never see each other's writes, and the store is seeded with the same
// data for the same seed and clock. Creating really creates, listing filters
// and paginates, refunds change the customer's balance; unknown ids and broken
// business rules come back as tool errors (isError) whose message says what
// the caller can do instead: which tool looks up valid ids, which argument to
// change, which call to make first.
//
// # A well-described server
//
// The demo is meant as a model of how a server should describe itself to a
// model that has never seen it:
//
//   - Every tool declares an output schema, and returns structuredContent
//     that matches it (with the same JSON as text, for clients that ignore
//     structured content). Every property of every schema has a description.
//   - Every tool with arguments has examples in its CodeCall metadata
//     (_meta.codecall.examples), each a call that succeeds on the seed data.
//   - Every tool states all four behaviour hints, because mcp.NewTool
//     otherwise reports every tool as destructive and open-world. The hints
//     describe the API the demo models rather than the in-memory store:
//     notifications.send_email reaches people outside the system in a real
//     deployment, so it is marked open-world even though the demo only
//     records the message in an outbox.
//   - Tools that move money, delete records or change who may do what are
//     marked requiresApproval, so a person confirms each call:
//     billing.refund_payment, billing.void_invoice, crm.delete_contact,
//     users.delete_account, users.update_role and users.deactivate.
//
// # Vocabulary
//
// The apps share one vocabulary; a word means the same in every tool's
// description, arguments, results and error messages.
//
// Names. Tools are <app>.<action> in snake_case, as are arguments and result
// fields. A tool that lists records is named list or list_<records>
// (crm.find_contacts, which also searches, is the exception); one that
// fetches one record is get or get_<record>.
//
// Ids are a prefix and a number: usr_001 (workspace users), con_001 (CRM
// contacts), inv_001 (invoices), pay_001 (payments), ref_001 (refunds),
// tkt_001 (tickets), cmt_001 (ticket comments), note_001 (contact notes),
// evt_001 (events), msg_001 (sent notifications) and prd_001 (products,
// which also answer to their SKU, such as HW-1001). A record's own id is
// "id"; a reference to another record is named after it: contact_id,
// invoice_id, payment_id, ticket_id, product_id. References to workspace
// users are named after their role in the record: user_id, owner_id,
// assignee_id, author_id (author_id on a ticket comment may also be the
// ticket's customer).
//
// Customers. The CRM calls the people the business sells to contacts, and
// takes contact_id. Every other app calls the same person a customer and
// takes customer_id, whose value is a contact id (con_...); any contact can
// be a customer there, whatever its lifecycle status. A customer_id that
// names no contact is an error that points at crm.find_contacts. Reports
// that name the customer next to its id call the name customer_name.
//
// Statuses. Each kind of record has its own set, and the same word is never
// stretched to cover another:
//   - contacts: lead, customer or churned (the lifecycle stage);
//   - users: active, invited (has not accepted yet) or deactivated;
//   - invoices: open (unpaid, not yet due), overdue (unpaid and past its due
//     date; derived from the clock, never stored), paid or void. "Unpaid"
//     means open or overdue, and both take payments; an open invoice is never
//     overdue, so status "open" and status "overdue" select disjoint sets;
//   - payments: succeeded, partially_refunded or refunded;
//   - tickets: open (waiting on staff), pending (waiting on the customer) or
//     closed. "Not closed" means open or pending; users.get counts those as
//     assigned_tickets.
//
// Money. Amounts are whole US cents in integer fields whose names end in
// _cents (total_cents, amount_due_cents, price_cents), so sums are exact;
// $15.00 is 1500. Invoices and balances also name their currency, always
// USD. analytics.query_metrics's revenue_cents metric and
// analytics.top_customers by revenue are net of refunds; the ranking's value
// is in cents only when it ranks by revenue.
//
// Time. Timestamps are RFC 3339 in UTC, to the second, in fields whose names
// end in _at (created_at, due_at, occurred_at). Days are UTC calendar dates,
// YYYY-MM-DD, in arguments and reports: issued_since and since select
// records on or after a day, from and to bound a range with both days
// included, period_start starts a day, a week (Monday) or a month.
//
// Lists. Tools that list records take limit (1 to 100, 20 by default) and
// offset, and return the page, total (the number of records matching the
// filters) and next_offset, the offset of the next page, absent on the last
// one. Text filters are called query and match any part of the fields they
// name, ignoring case; other filters are named after the field they match
// and compare its whole value.
// The two reports do not page: analytics.top_customers takes a limit of its
// own (1 to 50, 5 by default) and inventory.low_stock_report returns every
// product that needs reordering, most urgent first.
package demo
