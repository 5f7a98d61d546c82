// Package search finds the tools that fit an agent's request in a CodeCall
// catalog.
//
// An Index is a compact in-memory inverted index over the tools it was
// built from, scored with BM25F. Each tool is indexed in weighted fields:
// its name split into words (snake_case, camelCase, dots, dashes, colons),
// app id, title, tags, description, and the parameter names and (at low
// weight) parameter descriptions and enum values of its input schema, all
// with English analysis (bleve's analyzer: stemming, stop words). BM25F
// adds a term's frequencies across the fields, each times its field's
// boost and normalised by the field's length, before saturating them once,
// so a word in the name counts more than the same word in the description
// without a tool scoring twice for saying it in both. The weights are
// computed when the index is built; a search only adds them up for the
// query's terms. The full name is also kept, lower-cased and without
// separators, for the exact-name path.
//
// # Queries
//
// Agents describe a task in their own words ("open a ticket", "give the
// customer their money back") rather than in the tool's ("create_issue",
// "create_refund"). A query is therefore parsed into concepts:
//
//   - phrases from a curated vocabulary are recognised first ("pull request",
//     "who am i", "on call"), before stop words can break them up;
//   - filler ("I need a tool that can…", "right now"), quoted literals,
//     paths, file names and numbers are dropped: they are values for the
//     tool, not the need;
//   - a word after a negation does not count ("draft it but do not send"),
//     or becomes its "un" form when the catalog has one ("not staged" →
//     "unstaged");
//   - capitalised words the catalog does not know (people, places) and parts
//     of identifiers that name no tool (test_project_root) are kept as
//     "value" words of little weight;
//   - two words the catalog writes as one ("data sources" for datasources)
//     are one concept, and so is a word the catalog writes as two;
//   - a state word after the request's verb and before a noun ("list open
//     tickets", "restart the stopped jobs") describes the things wanted and
//     is dropped: it does not ask to open or stop anything;
//   - a file name or a URL leaves its kind ("file", "url") behind;
//   - every other word is a concept, widened with its related words from the
//     vocabulary (create/add/new/open/…, issue/ticket/bug/…, dozens of
//     groups, and a thesaurus of a few hundred more for the actions and
//     objects of software tools; see WithRelatedTerms), which count less
//     than the word itself. For verbs the vocabulary does not relate, the
//     synonyms of their most frequent WordNet sense are related words too
//     (see WithWordNet, which turns them off).
//
// A query that is a tool's name, or its name without the app prefix
// ("create_issue", "github/create_issue", "createIssue"), returns that tool
// first with score 1. A query that matches nothing is retried with the
// closest spellings from the catalog, with a "fuzzy_match" warning.
//
// # Scores
//
// BM25F retrieves candidates; they are then ranked by how much of the
// query they cover. Hit.Score is in [0, 1]:
//
//	score = coverage × (0.5 + 0.5·bm25/bm25_best) × (0.85 + 0.15·names/names_best)
//	                 × (0.7 + 0.3·headline/headline_best)
//
// coverage = Σ w_c·m_c / Σ w_c over the query's concepts c. The weight w_c
// is the concept's inverse document frequency in the catalog (rare words
// say more about which tool is meant); a concept the catalog does not
// mention at all gets the mean weight of the others, so that a request for
// something no tool does keeps a large uncovered share; a value word gets a
// quarter of the mean. The match m_c is the best of the concept's forms in
// the tool: 1 in the name or app id, 0.9 in the title, 0.8 in the tags,
// 0.7 in the description's first sentence, 0.6 in the rest of the
// description, 0.45 in parameter names, 0.3 in parameter descriptions; times 0.7 when only a related word matched, and 0.85 for a
// spelling correction. names is the share of the tool's own name words
// (without its app id) that the query accounts for: of two tools that cover
// the query alike, create_issue beats create_issue_link when the query says
// nothing about links. headline is the weighted share of the query the
// tool matches in its name, app, title, tags or summary: a tool that says
// in its headline what the request asks beats one that mentions it in
// passing. The BM25, name and headline factors are relative to the best
// candidate, so they order the hits without lowering the best one: the top
// score is, in effect, its coverage, and a 1 means every concept of the
// query is in the tool's name. A query that names an app ("on GitHub",
// "in Azure DevOps", matched against the catalog's app ids) wants that
// app's tools: every other app's tool has its score multiplied by 0.75.
// A query that asks for many things ("which tickets are open", "all
// users") prefers the sibling that returns many: a tool whose name says it
// returns one (get_ticket rather than list_tickets or search_users) has its
// score multiplied by 0.95.
// Tools of different apps with the same name without the app prefix
// (github.create_pull_request, github-legacy.create_pull_request) do the
// same thing on different servers: each is lifted to 0.98 of its best
// twin's score, before the app and one-of-many factors.
// Query.Explain returns each hit's factors.
//
// When the best score is below the low-relevance threshold (0.32 by
// default, see WithLowRelevance), or the best hit matches the request only
// in its description or parameters and in none of its name, app, title,
// tags or summary, the result carries a "low_relevance" warning: the
// catalog probably has no tool for this request, or the request needs
// rephrasing. The message says why, and names the request's words the
// best hit matches nowhere; Explanation.Headline shows the share the
// headline fields match. The threshold trades one error for the other;
// docs/search.md gives both rates on the project's evaluation set. The
// warning tells the client to check the hits, it does not hide them.
//
// # Dense retrieval
//
// WithEmbedder adds optional dense retrieval: every tool's text is embedded
// with an Embedder when the index is built, each query is embedded when it
// is searched, and the cosine similarity is fused into the score above:
//
//	fused = (1 − w)·score + w·dense,  dense = clamp((cos − mean)/(best − mean), 0, 1)
//
// where mean and best are the query's mean and best similarity over the
// filter's tools and w the dense weight (DefaultDenseWeight). The tools
// most similar to the query join the lexical candidates, so that a tool
// sharing no word with the request can still be found; such a tool scores
// at most w. An exact name still scores 1. Package search/embed provides
// Embedders for OpenAI-compatible servers and for model2vec static models.
// Without WithEmbedder, search is lexical only and needs no model.
//
// An Index is immutable and safe for concurrent use.
package search
