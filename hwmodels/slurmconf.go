package hwmodels

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Slurm configuration files (slurm.conf(5), gres.conf(5), topology.conf(5))
// share one syntax: "Key=Value" pairs separated by blanks, "#" to the end of
// a line is a comment ("\#" is a literal "#"), a line ending in "\"
// continues on the next, values may be double-quoted to hold blanks, keys
// are case-insensitive. The readers here are lenient where Slurm is (keys
// they do not use are warned about, once per key) and strict where the
// simulation depends on a value (a bad number or hostlist is a *ParseError
// naming the file, line and key).

// ConfWarning is a non-fatal finding of a config reader: a key schedsim
// does not use, a value it had to guess or drop.
type ConfWarning struct {
	Path string
	Line int
	Msg  string
}

func (w ConfWarning) String() string {
	switch {
	case w.Path != "" && w.Line > 0:
		return fmt.Sprintf("%s:%d: %s", w.Path, w.Line, w.Msg)
	case w.Path != "":
		return w.Path + ": " + w.Msg
	}
	return w.Msg
}

// confPair is one Key=Value of a line; Key as written.
type confPair struct{ Key, Value string }

// confLine is one logical line (continuations joined): Key=Value pairs,
// or an Include line naming a file.
type confLine struct {
	Path    string // the file it came from
	Line    int    // of its first physical line
	Pairs   []confPair
	Include string // the file name of an "Include FILE" line, else ""
}

// get returns the value of key (case-insensitive).
func (l *confLine) get(key string) (string, bool) {
	for _, p := range l.Pairs {
		if strings.EqualFold(p.Key, key) {
			return p.Value, true
		}
	}
	return "", false
}

// maxConfBytes bounds a config file.
const maxConfBytes = 16 << 20

// lexConf splits data into logical lines of pairs.
func lexConf(data []byte, path string) ([]confLine, error) {
	if len(data) > maxConfBytes {
		return nil, &ParseError{Path: path, Err: &specError{ErrRange, fmt.Sprintf("file is larger than the %d bytes a config file may be", maxConfBytes)}}
	}
	var out []confLine
	var cur strings.Builder
	start := 0
	phys := strings.Split(string(data), "\n")
	for i, raw := range phys {
		raw = strings.TrimSuffix(raw, "\r")
		// Strip the comment: the first '#' not preceded by '\'.
		var b strings.Builder
		for j := 0; j < len(raw); j++ {
			c := raw[j]
			if c == '\\' && j+1 < len(raw) && raw[j+1] == '#' {
				b.WriteByte('#')
				j++
				continue
			}
			if c == '#' {
				break
			}
			b.WriteByte(c)
		}
		text := strings.TrimRight(b.String(), " \t")
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(text, "\\") {
			cur.WriteString(strings.TrimSuffix(text, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(text)
		if err := appendConfLine(&out, cur.String(), path, start); err != nil {
			return nil, err
		}
		cur.Reset()
	}
	if err := appendConfLine(&out, cur.String(), path, start); err != nil {
		return nil, err
	}
	return out, nil
}

// appendConfLine appends the logical line text, if not blank, to out.
func appendConfLine(out *[]confLine, text, path string, line int) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	// "include FILE" (parse_config.c _parse_include_directive: the
	// keyword in any case, blanks, one file name).
	if len(text) > 7 && strings.EqualFold(text[:7], "include") && (text[7] == ' ' || text[7] == '\t') {
		name := strings.TrimSpace(text[8:])
		if name == "" || strings.ContainsAny(name, " \t") {
			return &ParseError{Path: path, Line: line, Field: "Include", Err: &specError{ErrSyntax, fmt.Sprintf("%q: want Include and one file name", text)}}
		}
		*out = append(*out, confLine{Path: path, Line: line, Include: name})
		return nil
	}
	pairs, err := splitPairs(text)
	if err != nil {
		return &ParseError{Path: path, Line: line, Err: &specError{ErrSyntax, err.Error()}}
	}
	*out = append(*out, confLine{Path: path, Line: line, Pairs: pairs})
	return nil
}

// splitPairs splits a line into Key=Value tokens; values may be quoted.
func splitPairs(line string) ([]confPair, error) {
	var out []confPair
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		k := i
		for i < len(line) && line[i] != '=' && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		key := line[k:i]
		if i == len(line) || line[i] != '=' {
			return nil, fmt.Errorf("%q: want Key=Value", key)
		}
		if key == "" {
			return nil, fmt.Errorf("%q: empty key before '='", line[k:min(len(line), k+20)])
		}
		i++ // '='
		var val string
		if i < len(line) && line[i] == '"' {
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("%s: unterminated quoted value", key)
			}
			val = line[i+1 : i+1+end]
			i += end + 2
		} else {
			v := i
			for i < len(line) && line[i] != ' ' && line[i] != '\t' {
				i++
			}
			val = line[v:i]
		}
		// A control character or invalid UTF-8 belongs in no setting, and
		// the imported spec (YAML) could not carry it (found by
		// FuzzImportSlurm: Priority=\x7f).
		if k := strings.IndexFunc(key+"="+val, func(r rune) bool { return r == utf8.RuneError || r < 0x20 || r == 0x7f }); k >= 0 {
			return nil, fmt.Errorf("%s: control character or invalid UTF-8 at byte %d of %q (want printable text)", key, k+1, key+"="+val)
		}
		out = append(out, confPair{Key: key, Value: val})
	}
	return out, nil
}

// confError is a *ParseError for key on line of path.
func confError(path string, line int, key string, kind error, format string, args ...any) error {
	return &ParseError{Path: path, Line: line, Field: key, Err: &specError{kind, fmt.Sprintf(format, args...)}}
}

// parseConfCount parses a Slurm count: digits with an optional K, M or G
// suffix (binary multiples), as gres counts are written.
func parseConfCount(s string) (int64, bool) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > 1<<40/mult {
		return 0, false
	}
	return v * mult, true
}

// countFiles returns how many device files a gres.conf File= names
// ("/dev/nvidia[0-7]" is 8, "/dev/nvidia[0-1,4]" 3, "/dev/nvidia0,/dev/nvidia1" 2).
func countFiles(s string) (int, error) {
	n := 0
	for _, it := range splitTopLevel(s) {
		if it == "" {
			continue
		}
		c := 1
		for rest := it; ; {
			lb := strings.IndexByte(rest, '[')
			if lb < 0 {
				break
			}
			rb := strings.IndexByte(rest, ']')
			if rb < lb {
				return 0, fmt.Errorf("file list %q: unbalanced brackets", s)
			}
			g := 0
			for _, r := range strings.Split(rest[lb+1:rb], ",") {
				lo, hi, isRange := strings.Cut(r, "-")
				a, err1 := strconv.Atoi(lo)
				b, err2 := a, error(nil)
				if isRange {
					b, err2 = strconv.Atoi(hi)
				}
				if err1 != nil || err2 != nil || b < a || b-a > 1<<16 {
					return 0, fmt.Errorf("file list %q: bad range %q", s, r)
				}
				g += b - a + 1
			}
			c *= g
			if c > 1<<20 {
				return 0, fmt.Errorf("file list %q names too many files", s)
			}
			rest = rest[rb+1:]
		}
		n += c
	}
	return n, nil
}

// TopologyConf is what a topology.conf defines: topology/tree's switches
// and topology/block's base blocks and BlockSizes (node counts; nil when
// not given; BlockSizesLine where they were).
type TopologyConf struct {
	Switches       []TreeSwitch
	Blocks         []BlockSpec
	BlockSizes     []int64
	BlockSizesPath string
	BlockSizesLine int
}

// ParseTopologyConf reads a Slurm topology.conf: SwitchName lines with
// Nodes= and/or Switches= (topology/tree; LinkSpeed= is accepted, Slurm
// ignores it too), BlockName lines with Nodes= and one BlockSizes line
// (topology/block, Slurm 23.11 and later). Unknown keys are warned about
// once each; a line starting with another key is an error. An Include
// line is an error here (there is no file access); cluster import follows
// them.
func ParseTopologyConf(data []byte, path string) (TopologyConf, []ConfWarning, error) {
	lines, err := lexConf(data, path)
	if err != nil {
		return TopologyConf{}, nil, err
	}
	for _, l := range lines {
		if l.Include != "" {
			return TopologyConf{}, nil, confError(path, l.Line, "Include", ErrSyntax, "Include %s: not followed here (cluster import follows it)", l.Include)
		}
	}
	return parseTopologyLines(lines)
}

// parseTopologyLines reads topology.conf's lines (includes expanded).
// BlockName and BlockSizes are checked as block_record.c _parse_block and
// _read_topo_file do: a block needs Nodes=; BlockSizes are positive node
// counts, each a power-of-two multiple of the first (ParseBlockSizes).
// Duplicate block names and hostlists are checked on import.
func parseTopologyLines(lines []confLine) (TopologyConf, []ConfWarning, error) {
	var out TopologyConf
	var warns []ConfWarning
	warned := map[string]bool{}
	unknown := func(l confLine, p confPair) {
		if k := strings.ToLower(p.Key); !warned[k] {
			warned[k] = true
			warns = append(warns, ConfWarning{l.Path, l.Line, fmt.Sprintf("unknown key %s ignored", p.Key)})
		}
	}
	for _, l := range lines {
		first := l.Pairs[0]
		switch {
		case strings.EqualFold(first.Key, "BlockSizes"):
			if out.BlockSizes != nil {
				return out, warns, confError(l.Path, l.Line, first.Key, ErrDuplicate, "BlockSizes is already given on line %d", out.BlockSizesLine)
			}
			for _, f := range strings.Split(first.Value, ",") {
				v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
				if err != nil {
					return out, warns, confError(l.Path, l.Line, first.Key, ErrSyntax, "%q: want node counts separated by commas, such as 18,36,72", first.Value)
				}
				out.BlockSizes = append(out.BlockSizes, v)
			}
			if _, err := ParseBlockSizes(out.BlockSizes); err != nil {
				return out, warns, confError(l.Path, l.Line, first.Key, ErrRange, "%v", err)
			}
			out.BlockSizesPath, out.BlockSizesLine = l.Path, l.Line
			for _, p := range l.Pairs[1:] {
				unknown(l, p)
			}
			continue
		case strings.EqualFold(first.Key, "BlockName"):
			b := BlockSpec{Name: first.Value, Path: l.Path, Line: l.Line}
			if b.Name == "" {
				return out, warns, confError(l.Path, l.Line, first.Key, ErrMissing, "empty block name")
			}
			if len(b.Name) > maxNameLen || strings.IndexFunc(b.Name, func(r rune) bool { return r > 0x7f || !isNameByte(byte(r)) }) >= 0 {
				return out, warns, confError(l.Path, l.Line, first.Key, ErrSyntax, "%q: want a name of letters, digits, '-', '_' and '.', 1 to %d characters (a cluster spec's block name)", b.Name, maxNameLen)
			}
			for _, p := range l.Pairs[1:] {
				if strings.EqualFold(p.Key, "Nodes") {
					b.Nodes = p.Value
				} else {
					unknown(l, p)
				}
			}
			if b.Nodes == "" {
				return out, warns, confError(l.Path, l.Line, first.Key, ErrMissing, "block %q has no Nodes=", b.Name)
			}
			out.Blocks = append(out.Blocks, b)
			continue
		case !strings.EqualFold(first.Key, "SwitchName"):
			return out, warns, confError(l.Path, l.Line, first.Key, ErrSyntax, "want SwitchName=, BlockName= or BlockSizes= first on the line")
		}
		ts := TreeSwitch{Name: first.Value, Line: l.Line}
		if ts.Name == "" {
			return out, warns, confError(l.Path, l.Line, "SwitchName", ErrMissing, "empty switch name")
		}
		if len(ts.Name) > maxNameLen || strings.IndexFunc(ts.Name, func(r rune) bool { return r > 0x7f || !isNameByte(byte(r)) }) >= 0 {
			return out, warns, confError(l.Path, l.Line, "SwitchName", ErrSyntax, "%q: want a name of letters, digits, '-', '_' and '.', 1 to %d characters (a cluster spec's switch name)", ts.Name, maxNameLen)
		}
		for _, p := range l.Pairs[1:] {
			switch strings.ToLower(p.Key) {
			case "nodes":
				ts.Nodes = p.Value
			case "switches":
				ts.Switches = p.Value
			case "linkspeed":
				if v, err := strconv.ParseInt(p.Value, 10, 32); err == nil && v > 0 {
					ts.LinkGbps = int32(v)
				}
			default:
				unknown(l, p)
			}
		}
		if ts.Nodes == "" && ts.Switches == "" {
			return out, warns, confError(l.Path, l.Line, "SwitchName", ErrMissing, "switch %q has neither Nodes= nor Switches=", ts.Name)
		}
		out.Switches = append(out.Switches, ts)
	}
	return out, warns, nil
}

// SlurmConfValue returns a global KEY=VALUE setting of slurm.conf text:
// the last one given, keys case-insensitive, comments dropped. It reads
// one setting without importing the file (the conformance and bundle
// replays read a few timing settings this way).
func SlurmConfValue(conf []byte, key string) (string, bool) {
	var val string
	found := false
	for l := range strings.SplitSeq(string(conf), "\n") {
		l, _, _ = strings.Cut(l, "#")
		l = strings.TrimSpace(l)
		k, v, ok := strings.Cut(l, "=")
		// Slurm's parser allows blanks around "=" (parse_config.c's
		// key-value regex); a blank inside the key is another line.
		k = strings.TrimSpace(k)
		if !ok || strings.ContainsAny(k, " \t") || !strings.EqualFold(k, key) {
			continue
		}
		val, found = strings.TrimSpace(v), true
	}
	return val, found
}
