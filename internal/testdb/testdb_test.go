package testdb

import "testing"

func TestRedisRestart(t *testing.T) {
	s := Redis(t)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.pingRedis() == nil {
		t.Fatal("redis still answers after Stop")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
}

func TestPostgresRestart(t *testing.T) {
	s := Postgres(t)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.ready() == nil {
		t.Fatal("postgres still answers after Stop")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
}
