"""treesens.frontends.cli"""
