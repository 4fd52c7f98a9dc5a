package stats

import "time"

var testEpoch = time.Now()

func timeNowForTest() time.Time { return testEpoch }
