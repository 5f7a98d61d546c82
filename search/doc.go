// Package search finds the tools that fit an agent's request in a CodeCall
// catalog.
//
// An Index holds an in-memory bleve index (scorch, BM25 scoring) over the
// tools it was built from: the tool name split into words, title,
// description, tags, app id and the parameter names and descriptions of the
// input schema, each field with its own weight. Agents rarely use a tool's
// own words ("open a ticket" for create_issue), so a query is parsed into
// concepts, each concept is widened with related words from a curated
// vocabulary at a lower weight, and the BM25 candidates are re-ranked by how
// much of the query they cover. A query that is a tool's exact name returns
// that tool first; a query with no hits is retried with spelling
// corrections. Results carry warnings the client can act on (no results,
// low relevance, unknown app ids, fuzzy matches).
//
// # Scores
//
// Hit.Score is in [0, 1]. It is the tool's coverage of the query times a
// factor from its BM25 score:
//
//	score = coverage × (0.5 + 0.5 × bm25 / bm25_best)
//
// coverage = Σ w_c·m_c / Σ w_c over the query's concepts c, where w_c is the
// concept's inverse document frequency in the catalog (rare words weigh
// more) and m_c is the best match of the concept in the tool: 1 when the
// word itself is in the tool's name or app id, less in the title, tags,
// description and parameters, and less again when only a related word
// matched. A concept that no tool mentions at all gets the mean weight of the
// others, so an unrelated request ("order a pizza") cannot reach a high
// score through the one word that happens to appear somewhere. A score of 1
// therefore means "every concept of the query is in the tool's name and it
// is the best BM25 match"; the exact-name path also gives 1.
//
// When the best score is below the low-relevance threshold (0.35 by
// default, see WithLowRelevance) the result carries a "low_relevance"
// warning: the catalog probably has no tool for this request.
//
// An Index is immutable and safe for concurrent use.
package search
