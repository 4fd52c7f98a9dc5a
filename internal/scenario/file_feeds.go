// Feeds: data files whose rows fill templates ({{feed.NAME.COLUMN}}), in
// file order, at random, or each row once.

package scenario

import (
	"path/filepath"
	"strings"

	"github.com/hail-loadgen/hail/internal/scenario/values"
	"gopkg.in/yaml.v3"
)

var feedKeys = []string{"file", "order", "format"}

// feeds reads the feeds section and loads every file.
func (l *loader) feeds() error {
	n, ok := l.nodes["feeds"]
	if !ok {
		return nil
	}
	return l.fields(n, "feeds", nil, func(name string, k, v *yaml.Node) error {
		if !nameRE.MatchString(name) || strings.Contains(name, ".") {
			return l.errAt(k, "feeds: name %q: expected letters, digits, _ or - (it is written {{feed.%s.COLUMN}})", name, name)
		}
		what := "feeds." + name
		f := &values.Feed{Name: name, Order: values.FeedSequential}
		var fileN *yaml.Node
		format := ""
		if err := l.fields(v, what, feedKeys, func(key string, k, v *yaml.Node) error {
			var err error
			switch key {
			case "file":
				fileN = v
				f.File, err = l.str(v, what+".file")
			case "order":
				f.Order, err = l.str(v, what+".order")
				if err == nil && f.Order != values.FeedSequential && f.Order != values.FeedRandom && f.Order != values.FeedUnique {
					err = l.errAt(v, "%s.order: expected sequential, random or unique, found %s", what, describe(v))
				}
			case "format":
				format, err = l.str(v, what+".format")
				if err == nil && format != "csv" && format != "jsonl" {
					err = l.errAt(v, "%s.format: expected csv or jsonl, found %s", what, describe(v))
				}
			}
			return err
		}); err != nil {
			return err
		}
		if fileN == nil {
			return l.errAt(v, "%s: expected file: PATH (a CSV file with a header row, or JSON Lines)", what)
		}
		if format == "" {
			switch strings.ToLower(filepath.Ext(f.File)) {
			case ".csv":
				format = "csv"
			case ".jsonl", ".ndjson":
				format = "jsonl"
			default:
				return l.errAt(fileN, "%s.file: cannot tell the format of %q from its name: expected a .csv or .jsonl file, or format: csv|jsonl", what, f.File)
			}
		}
		if err := f.Read(l.path(f.File), format, l.o.FileLimit); err != nil {
			return l.errAt(fileN, "%s.file: %v", what, err)
		}
		l.env.Feeds[name] = len(l.s.Feeds)
		l.s.Feeds = append(l.s.Feeds, f)
		return nil
	})
}
