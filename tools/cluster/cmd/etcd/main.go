// Thin main over the upstream etcd server (go.etcd.io/etcd/server/v3/etcdmain).
// etcd's own go.mod uses relative replace directives, so `go install` cannot build it;
// this module pins the published v3 modules instead.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
