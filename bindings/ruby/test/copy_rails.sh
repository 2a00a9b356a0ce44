# Sourced by the scripts that run Rails' own tests (proved_run.sh, both_ways.sh,
# gem_check.sh). copy_rails SRC DEST copies the Rails tree SRC (../shared/rails-7.2,
# about 40 MB) into the existing directory DEST, without ActiveRecord's SQLite
# databases: its tests keep them inside the tree (activerecord/test/fixtures), and some
# of ActionPack's and railties' tests write there too, so runs made at the same time
# from one tree, by anyone on the machine, would share them.
copy_rails() {
  cp -a "$1/." "$2/" && rm -f "$2"/activerecord/test/fixtures/*.sqlite3*
}
