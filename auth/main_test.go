package auth

import (
	"os"
	"testing"

	"github.com/pgreflect/pgreflect/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
