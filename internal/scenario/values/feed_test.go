package values

import "testing"

// FuzzFeed: any file either loads as rows as wide as its columns, or is
// refused with a message; never a panic.
func FuzzFeed(f *testing.F) {
	f.Add([]byte("id,email\nu1,a@x\n\"u,2\",\"b\"\"c\"\n"), false)
	f.Add([]byte("{\"id\": \"u1\", \"n\": 3}\n\n{\"id\": \"u\\u00e9\", \"n\": [1]}\n"), true)
	f.Add([]byte("a\n\"unterminated\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool) {
		parse := parseCSV
		if jsonl {
			parse = parseJSONL
		}
		cols, rows, err := parse(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty message")
			}
			return
		}
		for _, r := range rows {
			for _, c := range cols {
				if c >= len(r) {
					t.Fatalf("a row of %d values for column %d", len(r), c)
				}
			}
		}
	})
}
