package compiler

import (
	"github.com/knc-dev/knc/compiler/crd"
	"github.com/knc-dev/knc/compiler/model"
)

// Set is the objects of a project, or of one deploy unit, as the check
// stage typed them.
type Set = model.Set

// OpenAPI returns the OpenAPI 3.0 document of the four kinds, the schemas
// the CustomResourceDefinitions knc builds carry, as indented JSON.
func OpenAPI() ([]byte, error) { return crd.OpenAPI() }
