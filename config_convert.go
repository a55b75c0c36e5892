package mcpadapter

import (
	"errors"
	"fmt"
	"maps"

	"github.com/mcpadapter/mcpadapter/internal/config"
	"github.com/mcpadapter/mcpadapter/internal/engine"
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

// serverOptions are base with a server's own limits, task mode and cache.
func serverOptions(sc *ServerConfig, base ClientOptions) (ClientOptions, error) {
	opts := base
	opts.Name = sc.Name
	if sc.Timeout > 0 {
		opts.Timeout, opts.timeoutFrom = sc.Timeout, "\"timeout\" of mcpServers."+sc.Name+" in the config"
	}
	if sc.MaxTotalTimeout > 0 {
		opts.MaxTotalTimeout, opts.maxTotalFrom = sc.MaxTotalTimeout, "\"maxTotalTimeout\" of mcpServers."+sc.Name+" in the config"
	}
	opts.ResetTimeoutOnProgress = opts.ResetTimeoutOnProgress || sc.ResetTimeoutOnProgress
	switch {
	case sc.MaxConcurrentCalls < 0:
		return opts, &ConfigError{Path: "mcpServers." + sc.Name + ".maxConcurrentCalls", Msg: fmt.Sprintf("%d: want 0 (no cap) or more", sc.MaxConcurrentCalls)}
	case sc.MaxConcurrentCalls > 0:
		opts.MaxConcurrentCalls = sc.MaxConcurrentCalls
	}
	if sc.Tasks != TaskDefault { // "tasks" (task.go)
		t := TaskOptions{}
		if opts.Tasks != nil {
			t = *opts.Tasks
		}
		t.Mode = sc.Tasks
		opts.Tasks = &t
	}
	opts.Cache = sc.cacheConfig(base.Cache)
	return opts, nil
}

// serverEndpoint is the endpoint of a server's transport; for HTTP it sets
// opts' headers and credentials from the server's.
func serverEndpoint(sc *ServerConfig, base ClientOptions, opts *ClientOptions) (*engine.Endpoint, error) {
	ep, member, msg := engine.ConfigEndpoint(sc.Transport, sc.URL, sc.Command, sc.Args, sc.Env, sc.InheritEnv, sc.Cwd)
	switch {
	case ep == nil:
		return nil, &ConfigError{Path: "mcpServers." + sc.Name + "." + member, Msg: msg}
	case ep.Kind == engine.Stdio:
		return ep, nil
	}
	if len(sc.Headers) > 0 {
		h := make(map[string]string, len(base.Headers)+len(sc.Headers))
		maps.Copy(h, base.Headers)
		maps.Copy(h, sc.Headers)
		opts.Headers = h
	}
	a, err := serverAuthOf(sc, base)
	if err != nil {
		return nil, &ConfigError{Path: "mcpServers." + sc.Name + ".auth", Msg: err.Error()}
	}
	opts.Auth = a
	return ep, nil
}

// serverAuthOf is the Auth of an HTTP server's "auth" member, base.Auth
// when it has none.
func serverAuthOf(sc *ServerConfig, base ClientOptions) (Auth, error) {
	switch {
	case sc.Auth == nil:
		if _, ok := base.Auth.(*OAuth); ok {
			return nil, nil // an *OAuth is the template for "auth": "oauth" servers only
		}
		return base.Auth, nil
	case sc.Auth.Grant != nil && sc.Auth.Bearer == "" && sc.Auth.OAuth == nil:
		a, err := sc.Auth.Grant.auth() // config_grants.go
		if err != nil {
			return nil, err
		}
		if base.OAuthHandler != nil {
			return nil, fmt.Errorf("%q and ClientOptions.OAuthHandler: choose one", sc.Auth.Grant.Type)
		}
		return a, nil
	case (sc.Auth.Bearer != "") == (sc.Auth.OAuth != nil) || sc.Auth.Grant != nil:
		return nil, errors.New("a ServerAuth sets exactly one of Bearer, OAuth and Grant")
	case sc.Auth.OAuth != nil:
		o := oauthFor(base.Auth, sc.Auth.OAuth)
		if sc.Auth.OAuth.DPoPKeyFile != "" {
			key, err := oauthflow.ReadKeyFile("dpopKeyFile", sc.Auth.OAuth.DPoPKeyFile)
			if err != nil {
				return nil, err
			}
			o.DPoPKey = key
		}
		if err := o.check(); err != nil {
			return nil, err
		}
		if base.OAuthHandler != nil {
			return nil, errors.New(`"oauth" and ClientOptions.OAuthHandler: choose one`)
		}
		return o, nil
	default:
		return BearerToken(sc.Auth.Bearer), nil
	}
}
