package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key names are compared word by word. words splits a key at every
// character that is not a letter or digit and at camelCase boundaries, and
// lower-cases the words: "X-Api-Key", "x_api_key", "xApiKey" and "XAPIKey"
// all give [x api key]. A digit does not start a new word, so "oauth2Token"
// gives [oauth2 token]. The words share one allocated string.
func words(key string) []string {
	if isLowerWord(key) {
		return []string{key}
	}
	var b strings.Builder
	b.Grow(len(key) + 4)
	var bounds []int // start, end of each word in b
	start := -1
	flush := func() {
		if start >= 0 && b.Len() > start {
			bounds = append(bounds, start, b.Len())
		}
		start = -1
	}
	prev := rune(-1)
	for i, r := range key {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			prev = r
			continue
		}
		if unicode.IsUpper(r) && prev >= 0 {
			next, _ := utf8.DecodeRuneInString(key[i+utf8.RuneLen(r):])
			switch {
			case unicode.IsLower(prev) || unicode.IsDigit(prev):
				flush() // apiKey, oauth2Token
			case unicode.IsUpper(prev) && unicode.IsLower(next):
				flush() // APIKey: the K starts a word
			}
		}
		if start < 0 {
			start = b.Len()
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	flush()
	all := b.String()
	out := make([]string, len(bounds)/2)
	for i := range out {
		out[i] = all[bounds[2*i]:bounds[2*i+1]]
	}
	return out
}

// isLowerWord reports whether key is one word already in lower case
// (ASCII letters and digits), the common case words can answer without
// copying.
func isLowerWord(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return key != ""
}

// snake is the form user key globs are matched against: the words joined by
// underscores ("apiKey" → "api_key").
func snake(key string) string {
	return strings.Join(words(key), "_")
}

// snakeGlob rewrites a key glob from redaction.keys into the snake form, so
// that "*Pin", "*-pin" and "*_PIN" all mean "*_pin". Glob syntax survives:
// only letters, digits and the separators '-', '.', ' ' and '_' outside
// character classes are rewritten.
func snakeGlob(pattern string) string {
	var b strings.Builder
	inClass := false
	prev := rune(-1)
	sep := func() {
		if s := b.String(); len(s) > 0 && !strings.HasSuffix(s, "_") {
			b.WriteByte('_')
		}
	}
	for i, r := range pattern {
		switch {
		case inClass:
			if r == ']' {
				inClass = false
			}
			b.WriteRune(unicode.ToLower(r))
		case r == '[':
			inClass = true
			b.WriteRune(r)
		case r == '-' || r == '.' || r == ' ' || r == '_':
			sep()
		case unicode.IsUpper(r) && prev >= 0:
			next, _ := utf8.DecodeRuneInString(pattern[i+utf8.RuneLen(r):])
			// A capital starts a word unless it continues an acronym;
			// after a wildcard too ("*Pin" is "*_pin").
			if !unicode.IsUpper(prev) || unicode.IsLower(next) {
				sep()
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	return strings.TrimSuffix(b.String(), "_")
}

// secretNouns name a secret when they are the last word of a key
// (ignoring format words such as "value"): password, client_secret,
// accessToken, Set-Cookie.
var secretNouns = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "pwd": true,
	"pass": true, "secret": true, "secrets": true, "token": true, "apikey": true,
	"cookie": true, "cookies": true, "authorization": true, "auth": true,
	"credential": true, "credentials": true, "privatekey": true,
	"accesskey": true, "secretkey": true, "clientsecret": true,
}

// secretSuffixes name a secret at the end of a key written without
// separators ("accesstoken", "dbpassword"). "key" is not among them: it
// ends monkey, hockey and turkey.
var secretSuffixes = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"privatekey", "accesskey", "secretkey", "cookie", "credentials",
}

// keyQualifiers make a final "key" word secret: api_key, private_key,
// AWS_SECRET_ACCESS_KEY. Other keys (primary_key, sort_key, cache_key,
// public_key, idempotency_key) are left alone.
var keyQualifiers = map[string]bool{
	"api": true, "private": true, "secret": true, "access": true,
	"signing": true, "encryption": true, "decryption": true, "client": true,
	"master": true, "app": true, "ssh": true, "license": true, "licence": true,
	"shared": true, "webhook": true, "hmac": true, "session": true,
	"auth": true, "consumer": true, "subscription": true, "account": true,
	"root": true, "admin": true, "deploy": true,
}

// paginationWords before a final "token" mean a page cursor, not a secret:
// nextToken, next_page_token, ContinuationToken.
var paginationWords = map[string]bool{
	"next": true, "page": true, "continuation": true, "pagination": true,
	"cursor": true, "sync": true, "start": true, "starting": true,
	"resume": true, "prev": true, "previous": true, "marker": true,
}

// formatWords at the end of a key describe how a value is encoded, not what
// it is; they are skipped so that SecretString, token_value and
// private_key_pem are judged by the words before them.
var formatWords = map[string]bool{
	"value": true, "values": true, "string": true, "str": true, "text": true,
	"data": true, "b64": true, "base64": true, "hex": true, "pem": true,
	"der": true, "json": true, "raw": true, "plain": true, "plaintext": true,
	"encoded": true, "bytes": true, "content": true, "contents": true,
}

// passwordWords make a key secret wherever they appear in it, alone or
// split in two (password_hash, passwordConfirmation, old_passwd, PassWord):
// anything derived from a password is worth hiding.
var passwordWords = map[string]bool{"password": true, "passwd": true, "passphrase": true}

// builtinSecretKey reports whether the built-in rules call key secret.
func builtinSecretKey(key string) bool {
	ws := words(key)
	for i, w := range ws {
		w = strings.TrimRightFunc(w, unicode.IsDigit)
		ws[i] = w
		// "PassWord" and "pass_word" split into two words.
		if passwordWords[w] || i > 0 && passwordWords[ws[i-1]+w] {
			return true
		}
	}
	// Drop trailing format words and words that were only digits.
	for len(ws) > 0 && (ws[len(ws)-1] == "" || formatWords[ws[len(ws)-1]]) {
		ws = ws[:len(ws)-1]
	}
	if len(ws) == 0 {
		return false
	}
	last := ws[len(ws)-1]
	prev := ""
	if len(ws) > 1 {
		prev = ws[len(ws)-2]
	}
	switch {
	case last == "token":
		return !paginationWords[prev]
	case secretNouns[last]:
		return true
	case last == "key" || last == "keys":
		if keyQualifiers[prev] || secretNouns[prev+"key"] {
			return true
		}
		last = prev + "key" // XAPIKey is [xapi key]: judge "xapikey"
	}
	for _, suffix := range secretSuffixes {
		if rest, ok := strings.CutSuffix(last, suffix); ok && rest != "" {
			if suffix == "token" {
				return !paginationSuffix(rest)
			}
			return true
		}
	}
	return false
}

// paginationSuffix reports whether rest, the part of a one-word key before
// "token", is made of pagination words: "next", "nextpage", "continuation".
func paginationSuffix(rest string) bool {
	if rest == "" {
		return true
	}
	if len(rest) > 64 {
		return false // bounds the search on hostile keys
	}
	for w := range paginationWords {
		if r, ok := strings.CutPrefix(rest, w); ok && paginationSuffix(r) {
			return true
		}
	}
	return false
}
