package textbook_test

import (
	"testing"

	"github.com/zklocks/zklocks/internal/zktest"
)

func TestMain(m *testing.M) { zktest.MainWithExamples(m) }
