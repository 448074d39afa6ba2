#!/bin/sh
# Reproduces console/assets/vendor from the exact versions pinned in package-lock.json (npm ci verifies
# their integrity hashes). The copies are committed so that `go build` needs neither npm nor a network.
# Run from anywhere: console/web/update-assets.sh
set -eu
web=$(cd "$(dirname "$0")" && pwd)
vendor="$web/../assets/vendor"
cd "$web"
npm ci --no-audit --no-fund --ignore-scripts
rm -rf "$vendor"
mkdir -p "$vendor"
nm="$web/node_modules"
cp "$nm/react/umd/react.production.min.js" "$vendor/react.production.min.js"
cp "$nm/react-dom/umd/react-dom.production.min.js" "$vendor/react-dom.production.min.js"
cp "$nm/graphiql/graphiql.min.js" "$vendor/graphiql.min.js"
cp "$nm/graphiql/graphiql.min.css" "$vendor/graphiql.min.css"
cp "$nm/react/LICENSE" "$vendor/LICENSE.react"
cp "$nm/react-dom/LICENSE" "$vendor/LICENSE.react-dom"
cp "$nm/graphiql/LICENSE" "$vendor/LICENSE.graphiql"
# The versions actually copied, for the handler's tests and for readers of the tree.
node -e '
const v = (p) => require(p + "/package.json").version;
process.stdout.write(JSON.stringify({graphiql: v("graphiql"), react: v("react"), "react-dom": v("react-dom")}, null, 2) + "\n");
' >"$vendor/versions.json"
ls -l "$vendor"
