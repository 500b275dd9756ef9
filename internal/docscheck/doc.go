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
// # Quotes
//
// A quote is a ```go block preceded by a marker that names a file (from the
// module root) and a declaration in it, and followed by a link to the lines
// it shows:
//
//	<!-- quote: internal/lockq/queue.go func (*Queue).Head -->
//	```go
//	func (q *Queue) Head(ctx context.Context) (string, error) {
//	...
//	```
//	[internal/lockq/queue.go#L74-L92](../internal/lockq/queue.go#L74-L92)
//
// The declaration is written as in a method expression: Name for a
// function, type, constant or variable (a keyword func, type, const or var
// may precede it), (*T).Name or T.Name for a method of T, whichever its
// receiver. The block is the declaration's source, from its first keyword
// to its end, without the doc comment: the prose around a quote says what
// the doc comment says, and the quote stays short. Two modifiers, after
// the name:
//
//	doc                  include the doc comment
//	from "A" to "B"      only the lines from the first one containing A to
//	                     the next one containing B (both included), inside
//	                     the declaration; for a long function whose heart
//	                     is a few lines. Common indentation is removed.
//	                     A and B are Go string literals ("a \"b\"").
//
// Quotes elide nothing: a block is one contiguous run of source lines, so
// -update can always rewrite it. The check compares the block with the
// source byte for byte (tabs included) and the link's line numbers with the
// lines the block came from; a difference fails with a diff and the fix.
//
// # Links
//
// Every relative link or image in every .md file must resolve to a file or
// directory of the module (outside it, a link breaks on GitHub). An anchor
// on a Markdown file must name one of its headings (GitHub's slugs); #Ln
// and #Ln-Lm must lie within the file. A line-anchored link outside a quote
// must point into a Go file and its text must name a declaration there,
// written as in a quote marker (a package qualifier and backticks are
// allowed, as in [`sequential.Mutex.lock`](../sequential/recipe.go#L15-L59));
// its lines must be that declaration's, without the doc comment, and
// -update rewrites them. Line anchors into other files are refused: nothing
// could keep them in step.
//
// # Names
//
// A code span that is a Go test name (TestXxx, BenchmarkXxx, ExampleXxx,
// FuzzXxx; for a sub-test path like TestConformance/NoGoroutineLeak, its
// top-level function) must be a function in a _test.go file of the module.
// In a `go test` command inside a code block, each test name must match the
// start of a test function in one of the packages the command names, and
// every ./package it names must exist. A code span of the form pkg.Name or
// pkg.Type.Member, where pkg is the name of a package of this module, must
// name a declaration of that package (a member is a method, a struct field
// or an interface method).
//
// # Call paths
//
// Each variant's doc.go has a "# Through the code" section: after a
// sentence naming the call ("A Lock call goes:", "A Lock or RLock call
// goes:"), a table of the functions the call goes through and their files
// (pathtable.go). Every function a table names must lie on the call tree
// that zklocks path prints for that call (package internal/callpath), in
// the file the table gives; a type with a directory ("lockq.Queue
// internal/lockq") needs one of its methods there. The trees are built
// from the module's source with the go command, in about two seconds.
//
// # Mermaid
//
// A ```mermaid block must begin with a diagram keyword (sequenceDiagram,
// flowchart, ...), and its alt/opt/loop/par/critical/break/rect/box blocks
// must be closed by end; a block that begins with a diagram keyword must be
// fenced as mermaid, or GitHub shows it as text.
//
// # Lessons
//
// A chapter (docs/NN-name.md) is a lesson and a deep dive: everything
// above its first "## Deep dive" heading is the lesson, and may have at
// most LessonWordLimit words outside fenced blocks, about ten minutes'
// reading (lesson.go). TestLessonWords logs each chapter's count.
//
// # The hardening ledger
//
// docs/hardening.md has one row per conformance case the textbook lock
// fails (ledger.go): its cases must be exactly those the textbook
// variant's Expected map lists in textbook/mutex_test.go, and every file,
// function and test its "hardening" and "pinned by" columns name must
// exist (a name in the last file named before it in its cell).
//
// # The Chinese edition
//
// docs/zh keeps in step with the English chapters (zh.go): every chapter
// has a summary there that links it, every Chinese page links an English
// page that exists and is in docs/zh/README.md's map, and no heading holds
// a character whose anchor GitHub computes otherwise than slug does.
package docscheck
