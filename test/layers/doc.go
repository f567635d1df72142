// Package layers holds the tests that keep the module's folders in
// layers, each importing only the layers below it:
//
//	internal (leaf libraries, the routing contract among them)
//	→ schema
//	→ compiler, runtime (neither imports the other)
//	→ plugins (the back ends the compiler's render is handed)
//	→ cmd
//	→ test, golden, examples
//
// and that the CLI reaches the compile stages only through the compiler's
// library; also what each binary links, and that make fuzz runs every fuzz
// test of the module.
package layers
