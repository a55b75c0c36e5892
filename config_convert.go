package mcpadapter

import (
	"errors"

	"github.com/mcpadapter/mcpadapter/internal/config"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// parseConfig parses a config document with internal/config and turns the
// result into a *Config, or its problems into *ConfigErrors: one as is,
// several joined with errors.Join.
func parseConfig(file string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	doc, problems := config.Parse(data, config.Options{
		File:             file,
		Lookup:           lookup,
		CheckRedirectURL: oauthflow.CheckRedirectURL,
	})
	switch len(problems) {
	case 0:
		return configFromDocument(doc), nil
	case 1:
		return nil, configError(problems[0])
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = configError(p)
	}
	return nil, errors.Join(errs...)
}

// configError returns the *ConfigError of a problem.
func configError(p config.Problem) *ConfigError {
	e := ConfigError(p)
	return &e
}

// configFromDocument returns the Config of a parsed document.
func configFromDocument(doc *config.Document) *Config {
	cfg := &Config{Servers: make([]*ServerConfig, len(doc.Servers))}
	for i, s := range doc.Servers {
		cfg.Servers[i] = &ServerConfig{
			Name:         s.Name,
			Command:      s.Command,
			Args:         s.Args,
			Env:          s.Env,
			InheritEnv:   s.InheritEnv,
			Cwd:          s.Cwd,
			URL:          s.URL,
			Headers:      s.Headers,
			Transport:    s.Transport,
			Auth:         serverAuth(s.Auth),
			Timeout:      s.Timeout,
			IncludeTools: s.IncludeTools,
			ExcludeTools: s.ExcludeTools,
			Cache:        serverCache(s.Cache),
			Extra:        s.Extra,

			MaxConcurrentCalls: s.MaxConcurrentCalls,
			Tasks:              taskModeOf(s.Tasks),
			Prefix:             s.Prefix,
			Description:        s.Description,
			Tools:              toolTransforms(s.Tools),
			SkipArgumentCheck:  s.SkipArgumentCheck,

			MaxTotalTimeout:        s.MaxTotalTimeout,
			ResetTimeoutOnProgress: s.ResetTimeoutOnProgress,
		}
	}
	return cfg
}

// serverAuth returns the ServerAuth of a parsed "auth" member. (The
// conversions between the public types and internal/config's rely on
// their having the same fields: the compiler checks it.)
func serverAuth(a *config.Auth) *ServerAuth {
	switch {
	case a == nil:
		return nil
	case a.Grant != nil:
		g := GrantSettings(*a.Grant)
		return &ServerAuth{Grant: &g}
	case a.OAuth == nil:
		return &ServerAuth{Bearer: a.Bearer}
	}
	o := OAuthSettings(*a.OAuth)
	return &ServerAuth{OAuth: &o}
}

// serverCache returns the ServerCache of a parsed "cache" member.
func serverCache(c *config.Cache) *ServerCache {
	if c == nil {
		return nil
	}
	sc := ServerCache(*c)
	return &sc
}

// toolTransforms returns the ToolTransforms of a parsed "tools" member.
func toolTransforms(tools map[string]*config.Tool) map[string]*ToolTransform {
	if tools == nil {
		return nil
	}
	out := make(map[string]*ToolTransform, len(tools))
	for name, t := range tools {
		tt := &ToolTransform{Name: t.Name, Description: t.Description, Disabled: t.Disabled, Timeout: t.Timeout, MaxResultBytes: t.MaxResultBytes, Task: taskModeOf(t.Tasks),
			SkipArgumentCheck: t.SkipArgumentCheck}
		if t.Arguments != nil {
			tt.Arguments = make(map[string]*ArgTransform, len(t.Arguments))
			for an, a := range t.Arguments {
				at := ArgTransform(*a)
				tt.Arguments[an] = &at
			}
		}
		out[name] = tt
	}
	return out
}

// cacheConfig returns the cache settings of a client of sc whose
// ClientOptions.Cache is base: base when the config says nothing, nil for
// "cache": false, else the config's settings over base's (whose Store is
// kept).
func (sc *ServerConfig) cacheConfig(base *CacheConfig) *CacheConfig {
	switch {
	case sc.Cache == nil:
		return base
	case sc.Cache.Off:
		return nil
	}
	out := &CacheConfig{}
	if base != nil {
		*out = *base
	}
	if sc.Cache.DefaultTTL > 0 {
		out.DefaultTTL = sc.Cache.DefaultTTL
	}
	if sc.Cache.MaxTTL > 0 {
		out.MaxTTL = sc.Cache.MaxTTL
	}
	if sc.Cache.MaxEntries > 0 {
		out.MaxEntries = sc.Cache.MaxEntries
	}
	return out
}
