# Sourced by bench/run.sh and bench/blimp.sh: the other tools' venvs under bench/.work (gitignored).
# install_venv VENV LOCK SPEC [TAG]: a venv holding SPEC, with pip and torch (the CPU build) installed
# first, everything constrained by LOCK; reinstalled when LOCK (or TAG) changes.
install_venv() {
    local venv=$1 lock=$2 spec=$3 tag=${4:-}
    local stamp=$venv/.installed-$tag$(sha256sum "$lock" | cut -c1-16)
    if [ ! -f "$stamp" ]; then
        echo "installing $spec (constrained by $lock) into $venv" >&2
        rm -rf "$venv"
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q -c "$lock" pip
        "$venv/bin/pip" install -q -c "$lock" torch==2.13.0
        "$venv/bin/pip" install -q -c "$lock" "$spec"
        touch "$stamp"
    fi
}
