#!/usr/bin/python3
"""Writes a fastText-format text classification data set from Debian's package
descriptions: one line per binary package, `__label__SECTION text`, where the
text is the package's short and long description (never its name) and the
label its Section with any component prefix dropped (contrib/net -> net).

Packages come from apt lists kept in a private folder, main component, the
given suites (default: this system's codename and CODENAME-updates); the long
descriptions from the suites' Translation-en files, joined on Package and
Description-md5. Each binary package is used once; a later suite's stanza
replaces an earlier one's. Sections with fewer than MIN_SECTION packages are
dropped. Train and test are split by source package (crc32 of its name, test
when it is 0 modulo 10), so binaries of one source never straddle the split;
--split_seed=S makes another such split (crc32 of "S:" and the name).

Writes train.txt and test.txt (sorted by package name), stats.json and
README.txt, which record the lists' dates and the counts written.

  make_debian_descriptions.py --lists_dir=DIR --output_dir=DIR [--update] [--suites=A,B]
                              [--split_seed=S]

--update first runs apt-get update into --lists_dir (needs root), leaving the
system's own lists and cache alone. Standard library only.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zlib

MIN_SECTION = 20
TEST_BUCKET, BUCKETS = 0, 10
COMPONENT = "main"
ARCHITECTURES = ("amd64", "all")
APT_HELPER = "/usr/lib/apt/apt-helper"
# APT::Update hooks from the system's apt.conf.d run after every update; some
# refresh system caches (appstreamcli refresh writes /var/cache/swcatalog).
# A list can only be emptied by `#clear` in a config file, not by -o.
CLEAR_HOOKS = ("#clear APT::Update::Pre-Invoke;\n"
               "#clear APT::Update::Post-Invoke;\n"
               "#clear APT::Update::Post-Invoke-Success;\n")


def apt_update(lists_dir):
    """apt-get update into lists_dir, with a throwaway cache folder: the
    system's /var/lib/apt/lists and /var/cache/apt are not written."""
    os.makedirs(os.path.join(lists_dir, "partial"), exist_ok=True)
    with tempfile.TemporaryDirectory() as cache_dir, \
            tempfile.NamedTemporaryFile("w", suffix=".conf") as conf:
        conf.write(CLEAR_HOOKS)
        conf.flush()
        subprocess.run(["apt-get", "update", "-qq", "-c", conf.name,
                        "-o", "Dir::State::Lists=" + os.path.abspath(lists_dir),
                        "-o", "Dir::Cache=" + cache_dir,
                        "-o", "Acquire::Languages=en"], check=True)


def stanzas(text):
    """deb822 stanzas as dicts; a field's continuation lines follow its first
    line after a newline, each still with its leading space."""
    for block in text.split("\n\n"):
        fields, name = {}, None
        for line in block.split("\n"):
            if line[:1] in (" ", "\t"):
                fields[name] += "\n" + line
            elif line:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
        if fields:
            yield fields


def read_index(path):
    """An apt list file, whatever compression apt kept it in (lz4, gz, xz or
    none): apt-helper cat-file undoes it."""
    return subprocess.run([APT_HELPER, "cat-file", path], check=True,
                          stdout=subprocess.PIPE).stdout.decode("utf-8")


def index_files(name):
    """The list file called name, with or without a compression extension."""
    return sorted(glob.glob(name) + glob.glob(name + ".*"))


def suite_lists(lists_dir, suites):
    """For each suite: its Release file's Date and its Packages and
    Translation-en files. apt names a suite's files by a prefix ending in
    dists_SUITE_ followed by InRelease (or Release), COMPONENT_binary-ARCH_Packages
    or COMPONENT_i18n_Translation-en, each maybe with a compression extension."""
    found = {}
    for release in sorted(glob.glob(os.path.join(lists_dir, "*_InRelease"))
                          + glob.glob(os.path.join(lists_dir, "*_Release"))):
        with open(release, encoding="utf-8") as f:
            # InRelease is clearsigned: a PGP header stanza comes first.
            fields = next((s for s in stanzas(f.read()) if "Codename" in s), {})
        if fields.get("Codename") not in suites:
            continue
        prefix = release.rsplit("_", 1)[0] + "_" + COMPONENT + "_"
        packages = [p for arch in ARCHITECTURES
                    for p in index_files(prefix + "binary-%s_Packages" % arch)]
        translations = index_files(prefix + "i18n_Translation-en")
        if not packages or not translations:
            sys.exit("%s: no %s Packages or Translation-en beside it in %s"
                     % (release, COMPONENT, lists_dir))
        found[fields["Codename"]] = {"date": fields["Date"], "packages": packages,
                                     "translations": translations}
    if suites[0] not in found:
        sys.exit("%s: no lists for suite %s (run with --update?)" % (lists_dir, suites[0]))
    # A suite other than the first (CODENAME-updates) may be absent from the sources.
    return [(s, found[s]) for s in suites if s in found]


def description_text(description):
    """Short description plus long description body as one line: " ." lines
    (paragraph breaks) and all whitespace, tabs and newlines included, become
    single spaces, so fastText reads it as one example. No other change: the
    trainer lowercases and tokenizes."""
    lines = [line.strip() for line in description.split("\n")]
    return " ".join(" ".join(line for line in lines if line != ".").split())


def read_packages(lists):
    """{package: (section, source, text)} over the suites, later suites
    replacing earlier ones."""
    long_descriptions = {}
    for _, files in lists:
        for path in files["translations"]:
            for t in stanzas(read_index(path)):
                long_descriptions[(t["Package"], t["Description-md5"])] = t["Description-en"]
    packages = {}
    for suite, files in lists:
        for path in files["packages"]:
            for p in stanzas(read_index(path)):
                key = (p["Package"], p.get("Description-md5"))
                if key not in long_descriptions:
                    sys.exit("%s: no Translation-en description for %s (%s)"
                             % (suite, p["Package"], key[1]))
                section = p["Section"].rsplit("/", 1)[-1]
                source = p.get("Source", p["Package"]).split(" (")[0]
                packages[p["Package"]] = (section, source,
                                          description_text(long_descriptions[key]))
    return packages


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


def fasttext_lines(packages, names):
    return "".join("__label__%s %s\n" % (packages[n][0], packages[n][2]) for n in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lists_dir", required=True, help="private apt lists folder")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--update", action="store_true",
                        help="run apt-get update into --lists_dir first")
    parser.add_argument("--suites", help="comma-separated codenames; default: this "
                        "system's CODENAME,CODENAME-updates (/etc/os-release)")
    parser.add_argument("--split_seed", type=int, default=None,
                        help="another split by source package: crc32 of 'S:' and its name")
    args = parser.parse_args()
    if args.suites:
        suites = args.suites.split(",")
    else:
        with open("/etc/os-release", encoding="utf-8") as f:
            release = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        codename = release["VERSION_CODENAME"].strip('"')
        suites = [codename, codename + "-updates"]

    if args.update:
        apt_update(args.lists_dir)
    lists = suite_lists(args.lists_dir, suites)
    packages = read_packages(lists)

    section_sizes = {}
    for section, _, _ in packages.values():
        section_sizes[section] = section_sizes.get(section, 0) + 1
    kept = sorted(n for n, (section, _, _) in packages.items()
                  if section_sizes[section] >= MIN_SECTION)
    def split_key(source):
        if args.split_seed is None:
            return source.encode("utf-8")
        return ("%d:%s" % (args.split_seed, source)).encode("utf-8")
    test = [n for n in kept
            if zlib.crc32(split_key(packages[n][1])) % BUCKETS == TEST_BUCKET]
    test_set = set(test)
    train = [n for n in kept if n not in test_set]
    words = [len(packages[n][2].split()) for n in kept]
    classes = sorted({packages[n][0] for n in kept})

    stats = {
        "suites": [{"suite": s, "date": files["date"],
                    "files": [os.path.basename(p)
                              for p in files["packages"] + files["translations"]]}
                   for s, files in lists],
        "packages_read": len(packages),
        "packages_kept": len(kept),
        "min_section_packages": MIN_SECTION,
        "split_seed": args.split_seed,
        "sections_dropped": {s: c for s, c in sorted(section_sizes.items())
                             if c < MIN_SECTION},
        "classes": len(classes),
        "class_packages": {s: section_sizes[s] for s in classes},
        "train": len(train),
        "test": len(test),
        "train_sources": len({packages[n][1] for n in train}),
        "test_sources": len({packages[n][1] for n in test}),
        "words": sum(words),
        "median_words": statistics.median(words),
    }
    summary = ("debian descriptions (%s): %d packages read, %d kept in %d classes, "
               "train %d, test %d, %d words, median %s a description"
               % (", ".join("%s of %s" % (s["suite"], s["date"]) for s in stats["suites"]),
                  len(packages), len(kept), len(classes), len(train), len(test),
                  sum(words), stats["median_words"]))
    readme = (__doc__.split("\n\n")[0] + "\n\nMade by tools/data/make_debian_descriptions.py "
              "from the apt lists of:\n"
              + "".join("  %s, Date: %s\n" % (s["suite"], s["date"]) for s in stats["suites"])
              + "\n" + summary + ".\nstats.json has the counts, per class too.\n")

    os.makedirs(args.output_dir, exist_ok=True)
    # train.txt last: its presence is what tools/data/setup_data.sh checks.
    for name, text in (("test.txt", fasttext_lines(packages, test)),
                       ("stats.json", json.dumps(stats, indent=1) + "\n"),
                       ("README.txt", readme),
                       ("train.txt", fasttext_lines(packages, train))):
        write_atomically(os.path.join(args.output_dir, name), text)
    print(summary)


if __name__ == "__main__":
    main()
