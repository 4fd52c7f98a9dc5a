package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/random"
	"github.com/hail-loadgen/hail/internal/reqgen"
)

// urlFlags are oha's flags for many URLs in one run without a scenario:
// --urls-from-file (the URL argument is a file of URLs, one per line, a
// random one per request), --rand-regex-url (the URL argument is a regular
// expression each request's URL is generated from; dots are literal),
// --max-repeat (the extra repeats of x*, x+, x{n,}) and --dump-urls N
// (print N URLs and exit).
type urlFlags struct {
	fromFile  bool
	regex     bool
	maxRepeat int
	dump      int
	set       *reqgen.URLSet // loaded by load
}

func addURLFlags(fl *pflag.FlagSet, u *urlFlags) {
	u.maxRepeat = random.DefaultMaxRepeat
	fl.BoolVar(&u.regex, "rand-regex-url", false,
		"the URL is a regular expression (dots are literal) each request's URL is generated from: 'http://127.0.0.1:8080/[a-z]{3}'")
	fl.BoolVar(&u.fromFile, "urls-from-file", false, "the URL is a file of URLs, one per line: each request goes to a random one")
	fl.Var(intValue{&u.maxRepeat, "max repeat"}, "max-repeat", "--rand-regex-url: at most this many extra repeats for x*, x+ and x{n,}")
	fl.Var(intValue{&u.dump, "URLs to print"}, "dump-urls", "print the URLs of the first N requests, then exit")
	setGroup(fl, groupURLs, "rand-regex-url", "urls-from-file", "max-repeat", "dump-urls")
}

// load reads the file or compiles the regex when a flag asks for it; it
// returns the URL the plan is made from (a URL of the set, or arg).
func (u *urlFlags) load(cmd *cobra.Command, arg string) (string, error) {
	if cmd.Flags().Changed("max-repeat") && !u.regex {
		return "", fmt.Errorf("--max-repeat applies to --rand-regex-url")
	}
	if u.fromFile && u.regex {
		return "", fmt.Errorf("--urls-from-file and --rand-regex-url each say what the URL argument is: give one")
	}
	if !u.fromFile && !u.regex {
		return arg, nil
	}
	var err error
	if u.fromFile {
		u.set, err = reqgen.LoadURLs(arg)
	} else {
		if u.maxRepeat < 0 || u.maxRepeat > 1000 {
			return "", fmt.Errorf("--max-repeat %d: expected 0 to 1000", u.maxRepeat)
		}
		u.set, err = reqgen.RegexURLs(arg, u.maxRepeat)
	}
	if err != nil {
		return "", err
	}
	return u.set.First(), nil
}
