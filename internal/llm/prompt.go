package llm

import "fmt"

// A prompt of n tokens is n words, each a common English word with a
// leading space: a single token in the tokenizers of the models served
// today (GPT's cl100k and o200k, Llama 2 and 3, Mistral, Qwen, Gemma all
// split text at spaces first and hold these words whole), so n words are n
// tokens of content without a tokenizer in hail. A chat template adds its
// own tokens around a message (a few to a few tens); the server's usage
// reports the exact prompt tokens, and hail reports those when it sends
// them. Every request draws its words from its own number, so no two
// prompts share a prefix (a server's prefix cache cannot turn the load
// into cache hits).
var words = [256]string{
	" the", " of", " and", " to", " in", " is", " that", " for", " it", " as", " with", " was", " on", " be", " at", " by",
	" this", " had", " not", " are", " but", " from", " or", " have", " an", " they", " which", " one", " you", " were", " her", " all",
	" she", " there", " would", " their", " we", " him", " been", " has", " when", " who", " will", " more", " no", " if", " out", " so",
	" said", " what", " up", " its", " about", " into", " than", " them", " can", " only", " other", " new", " some", " could", " time", " these",
	" two", " may", " then", " do", " first", " any", " my", " now", " such", " like", " our", " over", " man", " me", " even", " most",
	" made", " after", " also", " did", " many", " before", " must", " through", " back", " years", " where", " much", " your", " way", " well", " down",
	" should", " because", " each", " just", " those", " people", " how", " too", " little", " state", " good", " very", " make", " world", " still", " own",
	" see", " men", " work", " long", " get", " here", " between", " both", " life", " being", " under", " never", " day", " same", " another", " know",
	" while", " last", " might", " us", " great", " old", " year", " off", " come", " since", " against", " go", " came", " right", " used", " take",
	" three", " small", " found", " general", " however", " home", " water", " house", " part", " during", " without", " place", " again", " around", " number", " course",
	" war", " until", " always", " away", " something", " fact", " though", " less", " public", " put", " think", " almost", " hand", " enough", " far", " took",
	" head", " yet", " government", " system", " better", " set", " told", " nothing", " night", " end", " why", " called", " door", " eyes", " find", " going",
	" look", " asked", " later", " knew", " point", " next", " program", " city", " business", " give", " group", " toward", " young", " days", " let", " room",
	" president", " side", " social", " given", " present", " several", " order", " national", " second", " possible", " rather", " per", " face", " among", " form", " important",
	" often", " things", " looked", " early", " white", " case", " john", " become", " large", " big", " need", " four", " within", " felt", " along", " children",
	" saw", " best", " church", " ever", " least", " power", " development", " thought", " seemed", " family", " interest", " want", " members", " mind", " country", " service",
}

// Salts of the prompts' words: a request's own, and a shared-prefix
// group's (so that no request's words are a group's).
const (
	saltPrompt = 0x70726f6d7074
	saltGroup  = 0x67726f7570 << 20
)

// appendPrompt appends n words drawn from key and salt (a request's
// number or a group's) among ws.
func appendPrompt(dst []byte, ws []string, n int, key, salt uint64) []byte {
	var h uint64
	for i := 0; i < n; i++ {
		if i%4 == 0 {
			h = mix(key, uint64(i/4)+salt)
		}
		dst = append(dst, ws[uint64(uint16(h))%uint64(len(ws))]...)
		h >>= 16
	}
	return dst
}

// Counter counts a text's tokens (a model's tokenizer: package
// tokenizer).
type Counter interface {
	Count(text []byte) int
}

// singleWords are the words of words that the counter counts as one token
// each, within a text: the prompt's words with that tokenizer. The error
// says when too few are.
func singleWords(c Counter) ([]string, error) {
	var ws []string
	for _, w := range words {
		if c.Count([]byte("x"+w)) == c.Count([]byte("x"))+1 {
			ws = append(ws, w)
		}
	}
	if len(ws) < 32 {
		return nil, fmt.Errorf("only %d of hail's %d prompt words are one token each with this tokenizer (32 are needed): its prompts cannot be made to a token count", len(ws), len(words))
	}
	return ws, nil
}
