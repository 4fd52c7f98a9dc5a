package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/plan"
)

// announcePlan prints the plan's notes on stderr before the run, one
// "hail: note:" line each. With fit (the load command) it first lowers -c
// to what the run's -n can use (plan.FitConnections), saying so when -c was
// given; scenario runs keep their connections, which stages may ramp to.
func announcePlan(cmd *cobra.Command, p *plan.Plan, fit bool) {
	notes := p.Notes(plan.FlagName)
	if fit {
		if n := p.FitConnections(plan.FlagName); n != "" && cmd.Flags().Changed("connections") {
			notes = append([]string{n}, notes...)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "hail: note: "+n)
	}
}
