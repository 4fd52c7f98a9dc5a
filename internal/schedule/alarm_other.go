//go:build !linux

package schedule

import "time"

type alarmTimer = goTimer

func newAlarmTimer(base time.Time) *alarmTimer { return newGoTimer(base) }
