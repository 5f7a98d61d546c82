package redact

import (
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	tests := map[string]string{
		"apiKey":             "api key",
		"api_key":            "api key",
		"X-Api-Key":          "x api key",
		"XAPIKey":            "xapi key",
		"APIKey":             "api key",
		"AWS_SECRET_KEY":     "aws secret key",
		"oauth2Token":        "oauth2 token",
		"password2":          "password2",
		"__client.secret__":  "client secret",
		"nextPageToken":      "next page token",
		"SecretString":       "secret string",
		"ÜberGeheimPasswort": "über geheim passwort",
		"":                   "",
	}
	for in, want := range tests {
		if got := strings.Join(words(in), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuiltinSecretKey(t *testing.T) {
	secret := []string{
		"password", "Password", "PASSWORD", "passwd", "pwd", "passphrase", "new_password", "password2",
		"password_hash", "passwordConfirmation", "db-password", "dbpassword", "PassWord", "pass_word", "pass", "smtp_pass",
		"token", "access_token", "accessToken", "accesstoken", "refresh_token", "id_token", "GITHUB_TOKEN",
		"x-auth-token", "X-Amz-Security-Token", "oauth2Token", "csrf_token", "token_value",
		"secret", "client_secret", "clientSecret", "CLIENT_SECRET", "webhookSecret", "SecretString", "secrets",
		"apiKey", "api_key", "API-KEY", "apikey", "x-api-key", "X_API_KEY", "XAPIKey",
		"authorization", "Authorization", "Proxy-Authorization", "auth", "basic_auth",
		"cookie", "Cookie", "Set-Cookie", "cookies",
		"privateKey", "private_key", "PRIVATE_KEY_PEM", "privatekey",
		"accessKey", "secret_access_key", "AWS_SECRET_ACCESS_KEY", "secretKey", "signing_key", "encryptionKey",
		"client_key", "master_key", "ssh_key", "app_key", "account_key", "subscriptionKey", "STRIPE_API_KEY",
		"credentials", "credential", "aws_credentials",
	}
	notSecret := []string{
		"keyword", "keywords", "tokenizer", "tokens", "max_tokens", "maxTokens", "total_tokens", "token_count",
		"token_type", "tokenType", "token_expires_in", "monkey", "turkey", "key", "keys", "primary_key",
		"sort_key", "partitionKey", "cache_key", "idempotency_key", "public_key", "publicKey", "key_id",
		"nextToken", "next_token", "nextPageToken", "pageToken", "page_token", "ContinuationToken",
		"NextContinuationToken", "previousToken", "nextpagetoken", "cursor", "secret_name", "secretName",
		"secretId", "authorization_url", "auth_type", "cookie_consent", "credential_id", "private_key_id",
		"name", "email", "id", "description", "author", "authored", "oauth", "passing", "swpd", "compass_wordlist", "word", "bypass", "pass_rate",
		"", "_", "123", "value",
	}
	for _, k := range secret {
		if !builtinSecretKey(k) {
			t.Errorf("%q should be secret", k)
		}
	}
	for _, k := range notSecret {
		if builtinSecretKey(k) {
			t.Errorf("%q should not be secret", k)
		}
	}
}

func TestSnakeGlob(t *testing.T) {
	tests := map[string]string{
		"ssn":          "ssn",
		"*Pin":         "*_pin",
		"*-pin":        "*_pin",
		"*_PIN":        "*_pin",
		"accountPIN":   "account_pin",
		"X-Tenant.Key": "x_tenant_key",
		"[A-Z]*-code":  "[a-z]*_code",
		"{sin,ssn}":    "{sin,ssn}",
		"_private_":    "private",
	}
	for in, want := range tests {
		if got := snakeGlob(in); got != want {
			t.Errorf("snakeGlob(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPaginationSuffixBounded(t *testing.T) {
	long := strings.Repeat("next", 1000) + "token"
	if !builtinSecretKey(long) {
		t.Error("a 4000-character key ending in token should count as secret")
	}
	if builtinSecretKey("previoustoken") || builtinSecretKey("nextpagetoken") {
		t.Error("pagination words run together should not count as secret")
	}
}
