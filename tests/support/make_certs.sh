#!/usr/bin/env bash
# make_certs.sh DIR -- the certificates of the TLS tests, made with openssl at test
# time (no key is ever committed). In DIR:
#
#   ca.pem ca.key                 a private CA, the one the tests trust
#   other-ca.pem                  another CA, which signed none of these ("wrong CA")
#   server.pem server.key         for 127.0.0.1 and localhost, signed by ca
#   expired.pem expired.key       the same names, signed by ca, valid only on 2020-01-01
#   wronghost.pem wronghost.key   signed by ca, for wrong.example only
#   client.pem client.key         a client certificate signed by ca (clientAuth)
#   other-client.pem other-client.key  a client certificate signed by other-ca
#   encrypted.key                 a key protected by a passphrase
#
# EC P-256 keys: quick to make, and what OpenSSL, GnuTLS, node and Go all take.
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
exec 3>&2 2>openssl.log
trap 'status=$?; [ $status = 0 ] || { cat openssl.log >&3; echo "make_certs.sh: openssl failed" >&3; }' EXIT

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ca() { # name, subject
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 30 -subj "/CN=$2" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
ca ca "hark test CA"
ca other-ca "hark other CA"

cat >ca.cnf <<'CNF'
[ca]
default_ca = test_ca
[test_ca]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = any
unique_subject = no
[any]
commonName = supplied
CNF
: >index.txt
echo 1000 >serial

# leaf NAME ISSUER SUBJECT_ALT_NAMES USAGE [START END]
leaf() {
  local name=$1 issuer=$2 san=$3 usage=$4
  key "$name.key"
  openssl req -new -key "$name.key" -out "$name.csr" -subj "/CN=$name"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=%s\n%s\n' \
    "$usage" "${san:+subjectAltName=$san}" >"$name.ext"
  local dates=(-days 30)
  [ $# -ge 6 ] && dates=(-startdate "$5" -enddate "$6")
  openssl ca -batch -notext -config ca.cnf -cert "$issuer.pem" -keyfile "$issuer.key" \
    -in "$name.csr" -out "$name.pem" -extfile "$name.ext" "${dates[@]}"
}
leaf server ca "IP:127.0.0.1,DNS:localhost" serverAuth
leaf expired ca "IP:127.0.0.1,DNS:localhost" serverAuth 20200101000000Z 20200102000000Z
leaf wronghost ca "DNS:wrong.example" serverAuth
leaf client ca "" clientAuth
leaf other-client other-ca "" clientAuth

openssl pkey -in client.key -out encrypted.key -aes256 -passout pass:hark-test
