package llmchunk

import (
	"testing"
)

func TestPick(t *testing.T) {
	t.Parallel()
	none := Fields{Completion: -1, Prompt: -1}
	obj := func(f Fields) Fields { f.Object = true; return f }
	cases := []struct {
		name string
		data string
		want Fields
	}{
		{"done", "[DONE]", Fields{Done: true, Completion: -1, Prompt: -1}},
		{"done with spaces", " [DONE] ", Fields{Done: true, Completion: -1, Prompt: -1}},
		{"done then more", "[DONE] x", none},
		{"not json", "hello", none},
		{"array", `[1,2]`, none},
		{"completions token", `{"id":"c","object":"text_completion","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null}],"usage":null}`,
			obj(Fields{Choices: true, Content: true, Completion: -1, Prompt: -1})},
		{"completions empty text", `{"choices":[{"text":"","finish_reason":"length"}]}`, obj(Fields{Choices: true, Completion: -1, Prompt: -1})},
		{"chat role only", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
			obj(Fields{Choices: true, Completion: -1, Prompt: -1})},
		{"chat content", `{"choices":[{"index":0,"delta":{"content":"Hi \"there\""},"finish_reason":null}]}`,
			obj(Fields{Choices: true, Content: true, Completion: -1, Prompt: -1})},
		{"chat null content", `{"choices":[{"delta":{"content":null}}]}`, obj(Fields{Choices: true, Completion: -1, Prompt: -1})},
		{"reasoning", `{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`, obj(Fields{Choices: true, Content: true, Completion: -1, Prompt: -1})},
		{"usage only", `{"id":"x","choices":[],"usage":{"prompt_tokens":12,"total_tokens":140,"completion_tokens":128}}`,
			obj(Fields{Completion: 128, Prompt: 12})},
		{"usage with content", `{"choices":[{"text":"a"}],"usage":{"prompt_tokens":3,"completion_tokens":7}}`,
			obj(Fields{Choices: true, Content: true, Completion: 7, Prompt: 3})},
		{"usage not integer", `{"usage":{"completion_tokens":1.5,"prompt_tokens":"3"}}`, obj(none)},
		{"second choice ignored", `{"choices":[{"delta":{}},{"delta":{"content":"x"}}]}`, obj(Fields{Choices: true, Completion: -1, Prompt: -1})},
		{"error member", `{"error":{"message":"overloaded","code":503}}`, obj(Fields{Error: true, Completion: -1, Prompt: -1})},
		{"error null", `{"error":null,"choices":[{"text":"x"}]}`, obj(Fields{Choices: true, Content: true, Completion: -1, Prompt: -1})},
		{"vllm error object", `{"object":"error","message":"bad","type":"BadRequestError","code":400}`, obj(Fields{Error: true, Completion: -1, Prompt: -1})},
		{"nested noise", `{"a":{"choices":[{"text":"x"}]},"b":[["]"],{"}":1}],"choices":[{"text":"y"}]}`,
			obj(Fields{Choices: true, Content: true, Completion: -1, Prompt: -1})},
		{"truncated", `{"choices":[{"text":"abc`, obj(Fields{Choices: true, Content: true, Completion: -1, Prompt: -1})},
		{"last key wins", `{"choices":[{"text":"a"}],"choices":[]}`, obj(none)},
	}
	for _, c := range cases {
		if got := Pick([]byte(c.data)); got != c.want {
			t.Errorf("%s: Pick(%s) = %+v, want %+v", c.name, c.data, got, c.want)
		}
	}
}

func TestPickNoAllocs(t *testing.T) {
	data := []byte(`{"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":9}}`)
	var f Fields
	if a := testing.AllocsPerRun(1000, func() { f = Pick(data) }); a != 0 {
		t.Errorf("%v allocations per Pick", a)
	}
	if !f.Content || f.Completion != 9 {
		t.Errorf("Pick = %+v", f)
	}
}

func BenchmarkPick(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-8f3a","object":"chat.completion.chunk","created":1700000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if !Pick(data).Content {
			b.Fatal("no content")
		}
	}
}
