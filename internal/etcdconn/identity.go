package etcdconn

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Identity names the data under the connection's prefix: the cluster's ID, which
// every member reports in each response's header, and the prefix.
func (c *Conn) Identity(ctx context.Context) (id string, err error) {
	ctx, end := c.Call.Start(ctx)
	defer end(&err)
	r, err := c.Cli.Get(ctx, c.Prefix+"/", clientv3.WithCountOnly())
	if err != nil {
		return "", fmt.Errorf("reading the etcd cluster's ID: %w", err)
	}
	return "etcd:" + strconv.FormatUint(r.Header.ClusterId, 16) + "/" + c.Prefix, nil
}
