package llm

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

// appendPrompt appends the n words of request hit's prompt.
func appendPrompt(dst []byte, n int, hit uint64) []byte {
	var h uint64
	for i := 0; i < n; i++ {
		if i%8 == 0 {
			h = mix(hit, uint64(i/8)+0x70726f6d7074)
		}
		dst = append(dst, words[byte(h)]...)
		h >>= 8
	}
	return dst
}
