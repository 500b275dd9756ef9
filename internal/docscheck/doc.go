// Package docscheck keeps the repository's Markdown honest about the code:
// it fails when a quoted snippet, a line reference, a link, a test name or
// a Go name in the docs no longer matches the source. Its test, TestDocs,
// checks every .md file of the module and runs with the rest of make test;
// make docs-check runs it alone:
//
//	go test ./internal/docscheck              # check
//	go test ./internal/docscheck -update      # rewrite quotes and line numbers from the source
//
// After -update, read the prose around every rewritten quote again: the
// tool keeps the code right, not what the text says about it.
//
// # The checks
//
// Each is written out in full in the file that makes it:
//
//   - Quotes (quote.go): a ```go block after a marker such as
//     <!-- quote: internal/lockq/queue.go func (*Queue).Head --> and
//     before a link to its lines must be that declaration's source, byte
//     for byte, and the link its lines; -update rewrites both.
//   - Links (links.go): every relative link resolves in the module, an
//     anchor names a heading of its file, and a line anchor points into a
//     Go file, at the declaration its link text names.
//   - Names (names.go): a test name in a code span, or in a go test
//     command, is a test function of the module, and a pkg.Name span names
//     a declaration of that package of the module.
//   - Call paths (pathtable.go): every function of a variant doc.go's
//     "# Through the code" table lies on the call tree that zklocks path
//     prints for that call, in the file the table gives.
//   - Mermaid (mermaid.go): a diagram is fenced as mermaid, begins with a
//     diagram keyword and closes every block it opens.
//   - Lessons (lesson.go): a chapter's lesson, above its "## Deep dive",
//     has at most LessonWordLimit words outside fenced blocks.
//   - The Chinese edition (zh.go): docs/zh keeps in step with the
//     chapters, and anchors are computed as GitHub does (slug).
//   - The hardening ledger (ledger.go): docs/hardening.md has one row per
//     conformance case the textbook lock is expected to fail, and every
//     file, function and test it names exists.
package docscheck
