package authapi

import (
	"os"
	"testing"

	"github.com/pgreflect/pgreflect/pgtest"
)

// TestMain gives every test of this binary (package authapi and authapi_test) a throwaway PostgreSQL.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
