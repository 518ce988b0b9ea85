// How every test server of ours listens: on 127.0.0.1, a free port, `/mcp`; closed with its open connections
// (a kept-alive client must not hold a test's teardown).

/** Starts `httpServer` listening; resolves to { port, url, close() }. */
export async function listenLocal(httpServer) {
  await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
  const { port } = httpServer.address();
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((r) => {
        httpServer.closeAllConnections?.();
        httpServer.close(() => r());
      }),
  };
}
