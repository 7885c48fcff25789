package reports

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocListsKeys checks that doc.go lists every summary.json key, as a
// full path and in the order the file has them, and every jobs.csv
// column, so that the README copy stays complete.
func TestDocListsKeys(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/summary.json.golden")
	if err != nil {
		t.Fatal(err)
	}

	// The leaf paths of the golden, in file order.
	var paths []string
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var stack []string // path elements; "[]" for a list
	var inObject []bool
	var scalarList []bool // per open list: no object seen in it
	key := true           // the next string in an object is a key
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				if n := len(scalarList); n > 0 && !inObject[len(inObject)-1] {
					scalarList[n-1] = false
				}
				inObject = append(inObject, true)
				key = true
				continue
			case '[':
				inObject = append(inObject, false)
				scalarList = append(scalarList, true)
				stack = append(stack, "[]")
				continue
			case '}':
				inObject = inObject[:len(inObject)-1]
			case ']':
				inObject = inObject[:len(inObject)-1]
				stack = stack[:len(stack)-1]
				scalar := scalarList[len(scalarList)-1]
				scalarList = scalarList[:len(scalarList)-1]
				// A list of scalars (notes) is a leaf.
				if p := pathOf(stack); scalar && !slices.Contains(paths, p) {
					paths = append(paths, p)
				}
			}
		default:
			if len(inObject) > 0 && inObject[len(inObject)-1] && key {
				stack = append(stack, tok.(string))
				key = false
				continue
			}
			if p := pathOf(stack); !slices.Contains(paths, p) && !strings.HasSuffix(p, "[]") {
				paths = append(paths, p)
			}
		}
		// A value ended: pop its key.
		if len(inObject) > 0 && inObject[len(inObject)-1] {
			stack = stack[:len(stack)-1]
			key = true
		}
	}

	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^//\t([a-z_][a-z0-9_.\[\]]*)`).FindAllSubmatch(doc, -1) {
		documented = append(documented, string(m[1]))
	}
	jsonDoc := documented[:slices.Index(documented, "job_id")]
	if diff := cmp.Diff(paths, jsonDoc); diff != "" {
		t.Errorf("doc.go summary.json keys differ from the golden's (-golden +doc):\n%s", diff)
	}
	if diff := cmp.Diff(jobsCSVHeader, documented[len(jsonDoc):]); diff != "" {
		t.Errorf("doc.go jobs.csv columns differ (-header +doc):\n%s", diff)
	}
	if !strings.Contains(string(doc), "schema_version                  1;") || SchemaVersion != 1 {
		t.Errorf("doc.go does not give schema_version %d", SchemaVersion)
	}
}

// pathOf joins path elements, writing lists as "a[]".
func pathOf(stack []string) string {
	return strings.ReplaceAll(strings.Join(stack, "."), ".[]", "[]")
}
