#!/usr/bin/env bash
# Makes a development certificate authority and certificates for a tune daemon, its workers and
# its clients, for mutual TLS on a test bed or a first deployment. Production fleets should use
# their own CA; the file names are what the systemd units, the Kubernetes Secrets and the tests
# expect.
#
#   deploy/tls/make-dev-certs.sh OUT_DIR [--host NAME]... [--days N]
#
# OUT_DIR receives (PEM, keys mode 0600):
#   ca.pem, ca-key.pem          the CA (keep ca-key.pem off the fleet)
#   daemon.pem, daemon-key.pem  tune-daemon: serverAuth for localhost, 127.0.0.1, ::1 and every
#                               --host; clientAuth too, so its local workers may present it
#   worker.pem, worker-key.pem  tune-server: clientAuth
#   client.pem, client-key.pem  tune-client and the Python client: clientAuth
# An existing OUT_DIR/ca.pem is reused (with its key), so new leaves join the same trust.
set -euo pipefail

usage() {
  echo "usage: $0 OUT_DIR [--host NAME]... [--days N]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
out=$1
shift
hosts=(localhost)
ips=(127.0.0.1 ::1)
days=825
while [[ $# -gt 0 ]]; do
  case $1 in
    --host)
      [[ $# -ge 2 ]] || usage
      if [[ $2 =~ ^[0-9.]+$ || $2 == *:* ]]; then ips+=("$2"); else hosts+=("$2"); fi
      shift 2
      ;;
    --days)
      [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage
      days=$2
      shift 2
      ;;
    *) usage ;;
  esac
done
command -v openssl >/dev/null || { echo "$0: openssl is needed (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$out"
umask 077

if [[ ! -f $out/ca.pem ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$out/ca-key.pem" -out "$out/ca.pem" -days "$days" -subj "/CN=tune development CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
fi

san="DNS:$(IFS=,; echo "${hosts[*]}" | sed 's/,/,DNS:/g')"
for ip in "${ips[@]}"; do san+=",IP:$ip"; done

# leaf NAME COMMON_NAME EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]
leaf() {
  local name=$1 cn=$2 eku=$3 alt=${4:-}
  local ext
  ext=$(mktemp)
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [[ -n $alt ]] && echo "subjectAltName=$alt"
  } >"$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$out/$name-key.pem" -out "$out/$name.csr" -subj "/CN=$cn" 2>/dev/null
  openssl x509 -req -in "$out/$name.csr" -CA "$out/ca.pem" -CAkey "$out/ca-key.pem" \
    -CAcreateserial -out "$out/$name.pem" -days "$days" -extfile "$ext" 2>/dev/null
  rm -f "$out/$name.csr" "$ext"
}

leaf daemon tune-daemon serverAuth,clientAuth "$san"
leaf worker tune-server clientAuth
leaf client tune-client clientAuth
rm -f "$out/ca.srl"
chmod 0644 "$out"/*.pem
chmod 0600 "$out"/*-key.pem
echo "certificates in $out: ca.pem, daemon.pem, worker.pem, client.pem (keys: *-key.pem)"
