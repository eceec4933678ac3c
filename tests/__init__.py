"""treesens.tests"""
