package config

import "testing"

// FuzzLoad reads arbitrary config.toml and .env text: a configuration or an error, never a panic, and every
// env(NAME) whose variable is set is substituted.
func FuzzLoad(f *testing.F) {
	f.Add(sample, "EXTRA_REDIRECT=https://x.example.com\n")
	f.Add("[api]\nport = \"env(PORT)\"\n", "PORT=1\n")
	f.Add("[auth.external.google]\nenabled = true\nclient_id = \"env(ID)\"\nsecret = \"env(SECRET)\"\n", "ID=a\nSECRET='b c'\n")
	f.Add("[api\n", "")
	f.Add("[[api]]\n", "=\n")
	f.Add("[auth]\njwt_expiry = 99999999999999999999\n", "export A=\"unterminated\n")
	f.Add("[api]\nschemas = [1, \"a\"]\n", "")
	f.Fuzz(func(t *testing.T, toml, dotenv string) {
		dir := writeProject(t, map[string]string{"config.toml": toml, ".env": dotenv})
		cfg, _, err := Load(dir, env(map[string]string{"ID": "client-id", "PORT": "54321"}))
		if err != nil {
			return
		}
		_ = cfg.API.SearchPath()
		for name, p := range cfg.Auth.External {
			if p.ClientID == "env(ID)" {
				t.Errorf("provider %s: client_id %q was not substituted", name, p.ClientID)
			}
		}
	})
}
