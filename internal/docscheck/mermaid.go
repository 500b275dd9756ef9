package docscheck

import (
	"regexp"
	"strings"
)

// A ```mermaid block must begin with a diagram keyword (sequenceDiagram,
// flowchart, ...), and its alt/opt/loop/par/critical/break/rect/box blocks
// must be closed by end; a block that begins with a diagram keyword must be
// fenced as mermaid, or GitHub shows it as text.

// mermaidKinds are the words a Mermaid diagram begins with.
var mermaidKinds = map[string]bool{
	"sequenceDiagram": true, "flowchart": true, "graph": true, "classDiagram": true,
	"stateDiagram": true, "stateDiagram-v2": true, "erDiagram": true, "gantt": true,
	"pie": true, "journey": true, "gitGraph": true, "mindmap": true, "timeline": true,
	"quadrantChart": true, "requirementDiagram": true, "xychart-beta": true,
	"sankey-beta": true, "block-beta": true, "packet-beta": true, "architecture-beta": true,
	"C4Context": true, "C4Container": true, "C4Component": true, "C4Dynamic": true, "C4Deployment": true,
}

// unmistakable are the diagram words that, at the start of a block not
// fenced as mermaid, can only be a diagram GitHub will not draw.
var unmistakable = regexp.MustCompile(`^(sequenceDiagram|flowchart|classDiagram|stateDiagram(-v2)?|erDiagram|gantt|gitGraph)\b|^graph (TD|TB|BT|RL|LR)\b`)

// mermaidBlockWords open a block that an "end" line closes.
var mermaidBlockWords = map[string]bool{"alt": true, "opt": true, "loop": true, "par": true,
	"critical": true, "break": true, "rect": true, "box": true}

func checkMermaid(d *doc) []Problem {
	var probs []Problem
	for _, f := range d.fences {
		body := d.body(f)
		first, at := firstDiagramLine(body)
		switch {
		case f.info != "mermaid":
			if unmistakable.MatchString(first) {
				probs = append(probs, d.problem(f.open, "a %s block fenced as %q: fence it as ```mermaid so GitHub draws it", strings.Fields(first)[0], f.info))
			}
			continue
		case !mermaidKinds[strings.Fields(first + " x")[0]]:
			probs = append(probs, d.problem(f.open+1+at, "mermaid block does not begin with a diagram keyword (sequenceDiagram, flowchart, ...): %q", first))
			continue
		}
		open := 0
		for i, l := range body[at+1:] {
			w := strings.Fields(l)
			switch {
			case len(w) == 0:
			case mermaidBlockWords[w[0]]:
				open++
			case w[0] == "end":
				if open--; open < 0 {
					probs = append(probs, d.problem(f.open+2+at+i, "mermaid: end without an open alt/opt/loop/par/critical/break/rect/box"))
					open = 0
				}
			}
		}
		if open > 0 {
			probs = append(probs, d.problem(f.close, "mermaid: %d alt/opt/loop/par/critical/break/rect/box block(s) not closed by end", open))
		}
	}
	return probs
}

// firstDiagramLine returns a block's first line that is not blank, a %%
// comment or front matter, and its index.
func firstDiagramLine(body []string) (string, int) {
	inFront := false
	for i, l := range body {
		t := strings.TrimSpace(l)
		switch {
		case t == "---":
			inFront = !inFront
		case inFront, t == "", strings.HasPrefix(t, "%%"):
		default:
			return t, i
		}
	}
	return "", len(body)
}
