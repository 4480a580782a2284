#!/usr/bin/env bash
# Test certificates for the TLS store tests (rediss://), made by the openssl CLI in folder $1:
#   ca.pem                      a test certificate authority
#   server.pem, server.key      a server certificate for 127.0.0.1 and localhost, signed by it
#   client.pem, client.key      a client certificate, signed by it
#   other-ca.pem                a second authority that signed nothing here
# Used by tests/replicas/harness.py, packages/python/tests/test_store.py and
# packages/node/test/store-tls.test.mjs. Valid for two days; made fresh by every run.
set -euo pipefail
cd "$1"
ossl() { openssl "$@" 2>/dev/null; }
for ca in ca other-ca; do
    ossl req -x509 -newkey rsa:2048 -nodes -keyout "$ca.key" -out "$ca.pem" -days 2 -subj "/CN=loopguard test $ca"
done
signed() { # name, common name, extensions
    ossl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2"
    printf '%b' "$3" > "$1.ext"
    ossl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days 2 -extfile "$1.ext"
}
signed server localhost 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
signed client replica 'extendedKeyUsage=clientAuth\n'
