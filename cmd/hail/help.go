package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flag groups of the help, in oha's order of its options: what load, which
// URLs, what request, through which proxy, in which protocol, over which
// connections and TLS, what output; then hail's own.
const (
	groupLoad     = "Load"
	groupURLs     = "URLs"
	groupRequest  = "Request"
	groupProxy    = "Proxy"
	groupProtocol = "Protocol"
	groupConnect  = "Connections"
	groupTLS      = "TLS"
	groupOutput   = "Output"
	groupResults  = "Results"
	groupDebug    = "Debugging and secrets"
	groupEngine   = "Engine"
)

var groupOrder = []string{groupLoad, groupURLs, groupRequest, groupStream, groupProxy, groupProtocol, groupConnect, groupTLS,
	groupOutput, groupResults, groupDebug, groupEngine}

// groupKey is the flag annotation that names a flag's help group.
const groupKey = "hail_group"

// setGroup puts the named flags into a help group.
func setGroup(fl *pflag.FlagSet, group string, names ...string) {
	for _, n := range names {
		if err := fl.SetAnnotation(n, groupKey, []string{group}); err != nil {
			panic(err) // a flag name misspelt in this file
		}
	}
}

// helpWidth is the width the help is wrapped to.
const helpWidth = 100

// writeHelp is the help of every command: the description, usage and
// examples, then the flags by group (ungrouped ones last, under
// "Flags:"), each with its value, default and description wrapped to 100
// columns, booleans without a value.
func writeHelp(w io.Writer, cmd *cobra.Command) {
	b := &strings.Builder{}
	desc := cmd.Long
	if desc == "" {
		desc = cmd.Short
	}
	if desc != "" {
		fmt.Fprintf(b, "%s\n\n", strings.TrimSpace(desc))
	}
	fmt.Fprintf(b, "Usage:\n  %s\n", cmd.UseLine())
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(b, "  %s [command]\n", cmd.CommandPath())
	}
	if cmd.Example != "" {
		fmt.Fprintf(b, "\nExamples:\n%s\n", cmd.Example)
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(b, "\nCommands:\n")
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				fmt.Fprintf(b, "  %-11s %s\n", c.Name(), c.Short)
			}
		}
	}
	groups := map[string][]*pflag.Flag{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := ""
		if a := f.Annotations[groupKey]; len(a) > 0 {
			g = a[0]
		}
		groups[g] = append(groups[g], f)
	})
	for _, g := range append(append([]string{groupLLM}, groupOrder...), "") { // hail llm's own flags first
		if len(groups[g]) == 0 {
			continue
		}
		title := g + ":"
		if g == "" {
			title = "Flags:"
		}
		fmt.Fprintf(b, "\n%s\n", title)
		for _, f := range groups[g] {
			writeFlag(b, f)
		}
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(b, "\nUse \"%s [command] --help\" for more information about a command.\n", cmd.CommandPath())
	}
	io.WriteString(w, b.String())
}

// flagColumn is where descriptions start; a longer flag puts its
// description on the next line.
const flagColumn = 30

// writeFlag writes one flag: "  -n, --n-requests N   description (default 200)".
func writeFlag(b *strings.Builder, f *pflag.Flag) {
	spec := "      --" + f.Name
	if f.Shorthand != "" {
		spec = "  -" + f.Shorthand + ", --" + f.Name
	}
	if f.Value.Type() != "bool" {
		spec += " " + valueName(f)
	}
	_, desc := pflag.UnquoteUsage(f)
	if d := defaultText(f); d != "" {
		desc += " (default " + d + ")"
	}
	lines := wrap(desc, helpWidth-flagColumn)
	if len(spec)+2 > flagColumn {
		b.WriteString(spec + "\n")
		b.WriteString(strings.Repeat(" ", flagColumn))
	} else {
		b.WriteString(spec + strings.Repeat(" ", flagColumn-len(spec)))
	}
	b.WriteString(strings.Join(lines, "\n"+strings.Repeat(" ", flagColumn)) + "\n")
}

// valueName is how a flag's value is shown: the `name` its usage quotes,
// its type's name, or the choices.
func valueName(f *pflag.Flag) string {
	name, _ := pflag.UnquoteUsage(f)
	switch t := f.Value.Type(); {
	case strings.Contains(f.Usage, "`"):
		return name
	case t == "string", t == "stringArray":
		return strings.ToUpper(strings.NewReplacer("-", "_").Replace(lastWord(f.Name)))
	default:
		return t
	}
}

func lastWord(name string) string {
	if i := strings.LastIndexByte(name, '-'); i >= 0 && len(name)-i > 3 {
		return name[i+1:]
	}
	return name
}

// defaultText is a flag's default as the help shows it; "" for none.
func defaultText(f *pflag.Flag) string {
	if d := f.DefValue; f.Value.Type() != "bool" && d != "" && d != "0" && d != "[]" {
		return d
	}
	return ""
}

// wrap splits s into lines of at most width runes, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
